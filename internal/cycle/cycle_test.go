package cycle

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/metrics"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/logline"
	"github.com/watchdogd/watchdogd/internal/notify/nudge"
	"github.com/watchdogd/watchdogd/internal/notify/registry"
	"github.com/watchdogd/watchdogd/internal/notify/slack"
	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
)

// beforeFence runs a hook right before the fencing read: the kandev
// database changes between decision and delivery. The reads themselves are
// the real reader's, on a real SQLite file.
type beforeFence struct {
	*kandev.Reader
	hook func()
}

func (b beforeFence) TaskSnapshot(ctx context.Context, taskID string) (*model.Snapshot, error) {
	if b.hook != nil {
		b.hook()
	}
	return b.Reader.TaskSnapshot(ctx, taskID)
}

func testCycle(t *testing.T, ds kandevdb.Dataset, hook func(db *kandevdb.SQLite)) (*Cycle, *slacktest.Server, *metrics.Metrics) {
	c, srv, m, _ := testCycleDB(t, ds, hook)
	return c, srv, m
}

func testCycleDB(t testing.TB, ds kandevdb.Dataset, hook func(db *kandevdb.SQLite)) (*Cycle, *slacktest.Server, *metrics.Metrics, *kandevdb.SQLite) {
	t.Helper()
	dir := t.TempDir()
	db, err := kandevdb.CreateSQLite(filepath.Join(dir, "kandev.db"), kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Write(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	c, srv, m := cycleOn(t, db.URL(), "sqlite://"+filepath.Join(dir, "state.db"), func() {
		if hook != nil {
			hook(db)
		}
	})
	return c, srv, m, db
}

// cycleOn is a cycle over kandev at kandevURL and the ledger at ledgerURL,
// posting to a Slack test server; hook runs before each fence.
func cycleOn(t testing.TB, kandevURL, ledgerURL string, hook func()) (*Cycle, *slacktest.Server, *metrics.Metrics) {
	t.Helper()
	r, err := kandev.Open(context.Background(), kandevURL, kandev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	store, err := ledger.Open(context.Background(), ledgerURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	srv := slacktest.New("xoxb-t")
	t.Cleanup(srv.Close)
	cfg, err := config.Parse("t.yaml", []byte("slack:\n  token_file: /x\n  default_channel: C1\n  api_url: "+srv.APIURL()+"\n"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New(prometheus.NewRegistry(), "test")
	c := &Cycle{Config: cfg, Reader: beforeFence{Reader: r, hook: hook}, Store: store, Log: zap.NewNop(), Metrics: m, Now: time.Now, Holder: "test"}
	connect(c, slack.NewClient("xoxb-t", srv.APIURL(), 5*time.Second), discardKandev{})
	return c, srv, m
}

// connect gives c its outlets: Slack through client (nil: no slack:
// block), nudges through k, the log.
func connect(c *Cycle, client *slack.Client, k nudge.Kandev) {
	var s *slack.Outlet
	if client != nil {
		s = &slack.Outlet{Client: client, Budget: func() int { return c.Config.Slack.MaxMessagesPerCycle },
			RateLimited: c.Metrics.SlackLimited}
	}
	n := &nudge.Outlet{Kandev: k, Current: c.Current, Read: c.ReadTask}
	c.Outlets = registry.Register(registry.Set{Slack: s, Nudge: n, Log: &logline.Outlet{}})
}

// discardKandev takes every nudge and cancel and does nothing.
type discardKandev struct{}

func (discardKandev) AddMessage(context.Context, string, string, string, string) error { return nil }
func (discardKandev) Cancel(context.Context, string) error                             { return nil }

// oneStall is kandev with one stalled turn: session s1 RUNNING, its turn
// turn-1 quiet for 30 minutes.
func oneStall() *kandevdb.Builder {
	b := kandevdb.NewBuilder(time.Now())
	s := b.Session("s1", "Fix login", "ws", "RUNNING", time.Hour, "")
	s.Turn("turn-1", 40*time.Minute, -1, "").Agent("tool_call", 30*time.Minute)
	return b
}

// finishTurn ends turn id of session s1 as kandev does when its agent
// ends it: the agent's streamed text written as a row at the close.
func finishTurn(db *kandevdb.SQLite, id string) error {
	now := kandevdb.TS(time.Now())
	if _, err := db.DB().Exec(`INSERT INTO task_session_messages (id, task_session_id, task_id, turn_id, author_type, type, content, metadata, created_at, updated_at)
	  VALUES (?, 's1', (SELECT task_id FROM task_sessions WHERE id = 's1'), ?, 'agent', 'message', 'done', '{}', ?, ?)`, "final-"+id, id, now, now); err != nil {
		return err
	}
	_, err := db.DB().Exec(`UPDATE task_session_turns SET completed_at = ? WHERE id = ?`, now, id)
	return err
}

// oneQuestion is kandev with one unanswered question: session s1
// WAITING_FOR_INPUT, its open turn turn-real asking "Pick A or B?" (pending
// p1) for 20 minutes.
func oneQuestion() *kandevdb.Builder {
	b := kandevdb.NewBuilder(time.Now())
	s := b.Session("s1", "Pick a driver", "ws", "WAITING_FOR_INPUT", time.Hour, "")
	s.Turn("turn-real", 40*time.Minute, -1, "").Agent("tool_call", 35*time.Minute).
		Clarification("p1", "q1", "Driver choice", "Pick A or B?", []kandevdb.QuestionOpt{{ID: "a", Label: "pgx"}, {ID: "b", Label: "lib/pq"}}, "pending", 20*time.Minute, nil)
	return b
}

// TestTurnMovedOnBeforeDelivery: the turn completed between the decision and
// the delivery: the fence supersedes the action and nothing is sent.
func TestTurnMovedOnBeforeDelivery(t *testing.T) {
	b := oneStall()
	c, srv, m := testCycle(t, b.DS, func(db *kandevdb.SQLite) {
		if _, err := db.DB().Exec(`UPDATE task_session_turns SET completed_at = ? WHERE id = 'turn-1'`, kandevdb.TS(time.Now())); err != nil {
			t.Error(err)
		}
	})
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Plan.Open) != 1 || len(res.Plan.Actions) != 1 {
		t.Fatalf("decided %+v", res.Plan)
	}
	if n := len(srv.Messages()); n != 0 {
		t.Fatalf("%d messages sent", n)
	}
	if res.Counts["superseded"] != 1 || testutil.ToFloat64(m.Actions.WithLabelValues("slack", "superseded")) != 1 {
		t.Fatalf("outcomes %v", res.Counts)
	}
	a, _ := c.Store.Action(context.Background(), res.Plan.Actions[0].Key)
	if a.State != model.StateSuperseded {
		t.Fatalf("action %s", a.State)
	}
}

// TestSilenceDefersAndReleases: a runtime silence holds a Slack step (it
// stays pending); expiring it releases the step on the next cycle.
func TestSilenceDefersAndReleases(t *testing.T) {
	b := oneStall()
	c, srv, m := testCycle(t, b.DS, nil)
	ctx := context.Background()
	if err := c.Store.AddSilence(ctx, ledger.Silence{ID: "sil-1", Matchers: model.Matchers{model.Equal("session_id", "s1")}, CreatedAt: time.Now(), Until: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Messages()); n != 0 || testutil.ToFloat64(m.Actions.WithLabelValues("slack", "deferred")) != 1 {
		t.Fatalf("%d messages while silenced", n)
	}
	if ok, err := c.Store.ExpireSilence(ctx, "sil-1", time.Now()); !ok || err != nil {
		t.Fatalf("expire: %v %v", ok, err)
	}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Messages()); n != 1 {
		t.Fatalf("%d messages after the silence expired", n)
	}
}

// TestQuietHoursDeferResolves: inside quiet hours nothing goes to Slack, the
// resolve of a sent message included; it is delivered when the window ends.
func TestQuietHoursDeferResolves(t *testing.T) {
	b := oneStall()
	c, srv, _, db := testCycleDB(t, b.DS, nil)
	ctx := context.Background()
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	start := model.ClockTime{Set: true, Minutes: now.Hour()*60 + now.Minute()}
	end := model.ClockTime{Set: true, Minutes: (start.Minutes + 3) % 1440}
	c.Config.QuietHours = &model.QuietHours{Timezone: "UTC", Start: start, End: end}
	// The stall clears while quiet: the episode resolves, its edit waits.
	if _, err := db.DB().Exec(`UPDATE task_session_turns SET completed_at = ? WHERE id = 'turn-1'`, kandevdb.TS(time.Now())); err != nil {
		t.Fatal(err)
	}
	res, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Plan.Resolve) != 1 || res.Counts["deferred"] != 1 {
		t.Fatalf("resolve %v outcomes %v", res.Plan.Resolve, res.Counts)
	}
	if msgs := srv.Messages(); msgs[0].Edits != 0 {
		t.Fatal("edited inside quiet hours")
	}
	c.Config.QuietHours = nil // the window ends
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if msgs := srv.Messages(); len(msgs) != 1 || msgs[0].Edits != 1 {
		t.Fatalf("after quiet hours: %+v", msgs)
	}
}

// TestDeletedFirstMessage: someone deleted the episode's first message in
// Slack; when the episode clears, its edit finds no message. That is not a
// failure to page anyone for (the failed-actions alert): the resolve is
// superseded, and nothing is posted in its place.
func TestDeletedFirstMessage(t *testing.T) {
	c, srv, m, db := testCycleDB(t, oneStall().DS, nil)
	ctx := context.Background()
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	first := srv.Messages()
	if len(first) != 1 || !srv.Delete(first[0].Channel, first[0].TS) {
		t.Fatalf("first message %+v", first)
	}
	if _, err := db.DB().Exec(`UPDATE task_session_turns SET completed_at = ? WHERE id = 'turn-1'`, kandevdb.TS(time.Now())); err != nil {
		t.Fatal(err)
	}
	res, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Plan.Resolve) != 1 || res.Counts["superseded"] != 1 || res.Counts["failed"] != 0 {
		t.Fatalf("resolve %v outcomes %v", res.Plan.Resolve, res.Counts)
	}
	if got := testutil.ToFloat64(m.Actions.WithLabelValues(string(model.ActionSlackUpdate), "failed")); got != 0 {
		t.Fatalf("failed resolves %v", got)
	}
	if n := srv.Calls("chat.update"); n != 1 || len(srv.Messages()) != 0 {
		t.Fatalf("chat.update calls %d, messages %+v", n, srv.Messages())
	}
}

// TestPerCycleBudget: slack.max_messages_per_cycle caps posts per channel
// per cycle; the rest wait, counted, for the next cycle.
func TestPerCycleBudget(t *testing.T) {
	b := kandevdb.NewBuilder(time.Now())
	for _, id := range []string{"s1", "s2", "s3"} {
		s := b.Session(id, "Task "+id, "ws", "RUNNING", time.Hour, "")
		s.Turn("turn-"+id, 40*time.Minute, -1, "").Agent("tool_call", 30*time.Minute)
	}
	c, srv, m := testCycle(t, b.DS, nil)
	c.Config.Slack.MaxMessagesPerCycle = 2
	ctx := context.Background()
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Messages()); n != 2 || testutil.ToFloat64(m.Actions.WithLabelValues("slack", "deferred")) != 1 {
		t.Fatalf("%d posts in the first cycle", n)
	}
	// The budget held one back; Slack refused nothing.
	if budget, answered := limited(m); budget != 1 || answered != 0 {
		t.Fatalf("rate limited: budget %v, 429 %v; want 1 and 0", budget, answered)
	}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Messages()); n != 3 {
		t.Fatalf("%d posts after the second cycle", n)
	}
}

// TestSlack429Counted: a 429 from Slack is counted as Slack's (reason
// 429), never as the budget's, so a dashboard of Slack's refusals shows
// only them.
func TestSlack429Counted(t *testing.T) {
	c, srv, m := testCycle(t, oneStall().DS, nil)
	srv.SetFault(func(method string, _ int) slacktest.Fault {
		if method == "chat.postMessage" {
			return slacktest.Fault{Status: 429, RetryAfter: 30}
		}
		return slacktest.Fault{}
	})
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if budget, answered := limited(m); budget != 0 || answered != 1 {
		t.Fatalf("rate limited: budget %v, 429 %v; want 0 and 1", budget, answered)
	}
}

// limited reads watchdogd_slack_rate_limited_total by reason.
func limited(m *metrics.Metrics) (budget, answered float64) {
	return testutil.ToFloat64(m.SlackRateLimited.WithLabelValues(metrics.LimitedByBudget)),
		testutil.ToFloat64(m.SlackRateLimited.WithLabelValues(metrics.LimitedByService))
}

// TestCycleSummary: each cycle logs one "cycle finished" line, at info when
// it changed something (here: an episode opened and its post delivered),
// at debug when it only saw the same episode again.
func TestCycleSummary(t *testing.T) {
	b := oneStall()
	c, _, _ := testCycle(t, b.DS, nil)
	core, logs := observer.New(zapcore.DebugLevel)
	c.Log = zap.New(core)
	for i, want := range []struct {
		level             zapcore.Level
		opened, delivered int64
	}{{zapcore.InfoLevel, 1, 1}, {zapcore.DebugLevel, 0, 0}} {
		if _, err := c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		var lines []observer.LoggedEntry
		for _, e := range logs.TakeAll() {
			if e.Message == "cycle finished" {
				lines = append(lines, e)
			}
		}
		if len(lines) != 1 {
			t.Fatalf("cycle %d: %d summary lines", i, len(lines))
		}
		f := lines[0].ContextMap()
		if lines[0].Level != want.level || f["sessions"] != int64(1) || f["findings"] != int64(1) ||
			f["opened"] != want.opened || f["delivered"] != want.delivered {
			t.Errorf("cycle %d: %s %v, want level %s opened %d delivered %d", i, lines[0].Level, f, want.level, want.opened, want.delivered)
		}
	}
}
