package main

import (
	"context"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
)

// TestRunTwicePostsOnce: two `run --once` in a row against the same data
// post each due step exactly once; the huge question is delivered.
func TestRunTwicePostsOnce(t *testing.T) {
	e := newEnv(t, world(time.Now()), "sqlite", "")
	e.once()
	first := len(e.slack.Messages())
	if first != 8 {
		t.Fatalf("first run posted %d messages, want 8 (one per Slack finding)", first)
	}
	e.once()
	if n := len(e.slack.Messages()); n != first {
		t.Fatalf("second run posted %d more", n-first)
	}
	if posts := e.exactlyOnce(); posts != 8 {
		t.Fatalf("%d delivered posts", posts)
	}
	huge := false
	for _, m := range e.slack.Messages() {
		if strings.Contains(m.Text, "Huge question") {
			huge = true
			if strings.Contains(m.Text, "<!here>") {
				t.Error("the title pinged @here")
			}
		}
	}
	if !huge {
		t.Error("the 30-option, 20,000-character question was not delivered")
	}
}

// TestKilledDuringDelivery: the binary is SIGKILLed at random moments of
// delivery (Slack answers slowly, after the post landed), 25 times; then run
// until quiet. Exactly one message per due step, later steps in the thread.
func TestKilledDuringDelivery(t *testing.T) {
	now := time.Now()
	// The stall's second step (a mention) comes due 25s into the test, so
	// replies are decided while processes are being killed.
	extra := "policy:\n  stalled_turn:\n    steps:\n      - {after: 0s, action: slack}\n      - {after: 42m25s, action: slack, mention: true}\n"
	e := newEnv(t, world(now), "sqlite", extra)
	e.slack.SetFault(func(method string, n int) slacktest.Fault {
		return slacktest.Fault{Delay: 400 * time.Millisecond, Record: true}
	})
	rng := rand.New(rand.NewPCG(1, 2))
	evidence := 0
	// 25 kills: most at a random moment; every third, the first included,
	// as soon as Slack has a new post and before it answers (its answer
	// waits 400 ms), so some kills surely land between a post and its
	// record, wherever the lanes' concurrency and the machine's load put
	// the random ones.
	const kills = 25
	for i := 0; i < kills; i++ {
		before := len(e.slack.Messages())
		cmd, out := e.startOnce()
		if i%3 == 0 {
			deadline := time.Now().Add(3 * time.Second)
			for len(e.slack.Messages()) == before && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
		} else {
			time.Sleep(time.Duration(200+rng.IntN(1600)) * time.Millisecond)
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		checkRaces(t, out.String())
		evidence += len(logLines(out.String(), "settled from evidence"))
	}
	if time.Since(now) < 30*time.Second {
		time.Sleep(30*time.Second - time.Since(now))
	}
	e.slack.SetFault(nil)
	quiet := false
	for i := 0; i < 8 && !quiet; i++ {
		time.Sleep(2500 * time.Millisecond) // let stale claims pass claim_ttl
		evidence += len(logLines(e.once().stderr, "settled from evidence"))
		quiet = true
		for _, a := range e.actions() {
			if !a.Terminal() {
				quiet = false
			}
		}
	}
	if !quiet {
		t.Fatal("never quiet")
	}
	posts := e.exactlyOnce()
	replies := 0
	for _, m := range e.slack.Messages() {
		if m.ThreadTS != "" {
			replies++
		}
	}
	if posts < 9 || replies < 1 {
		t.Fatalf("%d posts, %d replies: the stall's second step never went out", posts, replies)
	}
	// Some kills must have landed between a post and its record, or the
	// test did not exercise settling from evidence.
	if evidence == 0 {
		t.Fatal("no delivery was settled from evidence: no kill hit the window between post and record")
	}
	t.Logf("%d posts (%d replies) after %d kills; %d settled from evidence", posts, replies, kills, evidence)
}

// TestTwoProcessesOneLedger: processes running cycles at the same time on
// one SQLite ledger, and on one PostgreSQL ledger, never duplicate.
func TestTwoProcessesOneLedger(t *testing.T) {
	pgURL, err := pg.NewDatabase(context.Background(), "ledger")
	if err != nil {
		t.Fatal(err)
	}
	for _, state := range []string{"sqlite", pgURL} {
		e := newEnv(t, world(time.Now()), state, "")
		e.slack.SetFault(func(string, int) slacktest.Fault { return slacktest.Fault{Delay: 50 * time.Millisecond, Record: true} })
		for round := 0; round < 3; round++ {
			a, aout := e.startOnce()
			b, bout := e.startOnce()
			if err := a.Wait(); err != nil {
				t.Fatalf("%s: %v\n%s", state, err, aout)
			}
			if err := b.Wait(); err != nil {
				t.Fatalf("%s: %v\n%s", state, err, bout)
			}
		}
		if posts := e.exactlyOnce(); posts != 8 {
			t.Fatalf("%s: %d posts, want 8", state, posts)
		}
	}
}

// TestAnsweredEditsOnce: a question answered and a turn that moved on edit
// the original message once; nothing new is posted.
func TestAnsweredEditsOnce(t *testing.T) {
	e := newEnv(t, world(time.Now()), "sqlite", "")
	e.once()
	posted := len(e.slack.Messages())
	db := e.kandev.DB()
	// Answer the auth question; the stalled turn's agent ends it (kandev
	// writes its streamed text at the close).
	if _, err := db.Exec(`UPDATE task_session_messages SET metadata = json_set(metadata, '$.status', 'answered') WHERE turn_id = 'turn-question' AND type = 'clarification_request'`); err != nil {
		t.Fatal(err)
	}
	closed := kandevdb.TS(time.Now())
	if _, err := db.Exec(`INSERT INTO task_session_messages (id, task_session_id, task_id, turn_id, author_type, type, content, metadata, created_at, updated_at)
	  SELECT 'final-stalled', task_session_id, task_id, id, 'agent', 'message', 'done', '{}', ?, ? FROM task_session_turns WHERE id = 'turn-stalled'`, closed, closed); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE task_session_turns SET completed_at = ? WHERE id = 'turn-stalled'`, closed); err != nil {
		t.Fatal(err)
	}
	e.once()
	e.once()
	msgs := e.slack.Messages()
	if len(msgs) != posted {
		t.Fatalf("%d new messages", len(msgs)-posted)
	}
	edited := map[string]int{}
	for _, m := range msgs {
		if m.Edits > 0 {
			edited[m.Text] = m.Edits
		}
	}
	if len(edited) != 2 {
		t.Fatalf("edited %v, want the question's and the stall's first messages", edited)
	}
	for text, n := range edited {
		if n != 1 || !strings.Contains(text, "Cleared after") {
			t.Errorf("edited %d times: %q", n, text)
		}
	}
	var answered, completed bool
	for text := range edited {
		answered = answered || strings.Contains(text, "answered")
		completed = completed || strings.Contains(text, "the turn completed")
	}
	if !answered || !completed {
		t.Errorf("resolve reasons: %v", edited)
	}
	e.exactlyOnce()
}

// TestRetryAfterIsHonoured: after a 429 with Retry-After, nothing is sent to
// that channel before the delay, across processes.
func TestRetryAfterIsHonoured(t *testing.T) {
	e := newEnv(t, world(time.Now()), "sqlite", "")
	limitedAt := make(chan time.Time, 1)
	e.slack.SetFault(func(method string, n int) slacktest.Fault {
		if method == "chat.postMessage" && n == 1 {
			limitedAt <- time.Now()
			return slacktest.Fault{Status: 429, RetryAfter: 4}
		}
		return slacktest.Fault{}
	})
	e.once()
	e.once() // inside the window: the limited channel waits
	limited := <-limitedAt
	var blocked string
	deadline := limited.Add(4 * time.Second)
	// Which channel was limited: the one with a gate in the ledger.
	for _, ch := range []string{"C-alerts", "C-ops", "C-docs"} {
		if g, _ := e.ledger().GateUntil(context.Background(), ch); !g.IsZero() {
			blocked = ch
		}
	}
	if blocked == "" {
		t.Fatal("no channel gate recorded")
	}
	for _, m := range e.slack.Messages() {
		if m.Channel == blocked && m.At.Before(deadline) {
			t.Fatalf("posted to %s %v after the 429, inside Retry-After", blocked, m.At.Sub(limited))
		}
	}
	time.Sleep(time.Until(deadline) + 500*time.Millisecond)
	e.once()
	if posts := e.exactlyOnce(); posts != 8 {
		t.Fatalf("%d posts after the window", posts)
	}
}

// TestChannelChangeIsAConflict: the channel changed in config between a
// failed attempt and its retry: a counted conflict, and the stored decision
// is delivered once, to the channel first decided.
func TestChannelChangeIsAConflict(t *testing.T) {
	e := newEnv(t, world(time.Now()), "sqlite", "")
	e.slack.SetFault(func(method string, n int) slacktest.Fault {
		if method == "chat.postMessage" {
			return slacktest.Fault{Status: 503}
		}
		return slacktest.Fault{}
	})
	e.once()
	e.slack.SetFault(nil)
	e.vars["extra"] = ""
	cfg := strings.Replace(baseConfig, "default_channel: C-alerts", "default_channel: C-moved", 1)
	writeConfigText(t, e, cfg)
	time.Sleep(5500 * time.Millisecond) // the first retry's backoff
	r := e.once()
	if len(logLines(r.stderr, "decision conflicts")) == 0 {
		t.Fatalf("no conflict logged:\n%s", r.stderr)
	}
	for _, m := range e.slack.Messages() {
		if m.Channel == "C-moved" {
			t.Fatalf("a post went to the new channel: %q", m.Text)
		}
	}
	if posts := e.exactlyOnce(); posts != 8 {
		t.Fatalf("%d posts", posts)
	}
}

// TestStallComesBack: a stall that clears and comes back on the same turn is
// posted again, as a new episode.
func TestStallComesBack(t *testing.T) {
	b := kandevdb.NewBuilder(time.Now())
	s := b.Session("sess-flap", "Flapping agent", "ws-web", "RUNNING", time.Hour, "")
	s.Turn("turn-flap", 30*time.Minute, -1, "").Agent("tool_call", 20*time.Minute)
	e := newEnv(t, b.DS, "sqlite", "thresholds:\n  stall_after: 3s\n")
	e.once()
	if _, err := e.kandev.DB().Exec(`UPDATE task_session_messages SET updated_at = ? WHERE turn_id = 'turn-flap'`, kandevdb.TS(time.Now())); err != nil {
		t.Fatal(err)
	}
	e.once() // output resumed: resolved, first message edited
	time.Sleep(3500 * time.Millisecond)
	e.once() // quiet again for longer than stall_after: a new episode
	msgs := e.slack.Messages()
	if len(msgs) != 2 || msgs[0].Edits != 1 || !strings.Contains(msgs[0].Text, "the agent produced output") {
		t.Fatalf("messages %+v", msgs)
	}
	eps, _ := e.ledger().Episodes(context.Background(), false, 10)
	if len(eps) != 2 || eps[0].ID == eps[1].ID {
		t.Fatalf("episodes %+v", eps)
	}
}

// TestNudges: nudges go through kandev's WebSocket with client_message_id;
// a replay creates no second message; a RUNNING session's refusal (the
// session with two open turns) is reported once, not retried forever.
func TestNudges(t *testing.T) {
	extra := `policy:
  interrupted_session:
    steps: [{after: 0s, action: nudge}]
  multiple_open_turns:
    steps: [{after: 0s, action: nudge}]
`
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	r := e.once()
	msgs := e.ws.Messages()
	if len(msgs) != 1 || msgs[0].SessionID != "sess-parked" || len(msgs[0].ClientMessageID) != 36 {
		t.Fatalf("kandev messages %+v\n%s", msgs, r.stderr)
	}
	if len(logLines(r.stderr, "kandev refused message.add")) != 1 {
		t.Fatalf("the RUNNING refusal is not reported:\n%s", r.stderr)
	}
	// Replay the delivered nudge as a crashed holder would: the same key
	// gives the same client_message_id, which kandev deduplicates.
	var nudge model.Action
	for _, a := range e.actions() {
		if a.Kind == model.ActionNudge && a.State == model.StateDelivered {
			nudge = a
		}
	}
	if err := killedHolder(e, nudge.Key); err != nil {
		t.Fatal(err)
	}
	e.once()
	e.once()
	if n := len(e.ws.Messages()); n != 1 || e.ws.Duplicates() != 1 {
		t.Fatalf("%d kandev messages and %d deduplicated replays after a replay, want 1 and 1", n, e.ws.Duplicates())
	}
	failed := 0
	for _, a := range e.actions() {
		if a.Kind == model.ActionNudge && a.State == model.StateFailed {
			failed++
			if a.Attempts != 1 {
				t.Errorf("the refused nudge was attempted %d times", a.Attempts)
			}
		}
	}
	if failed != 1 {
		t.Fatalf("%d failed nudges, want the RUNNING one", failed)
	}
}

// TestNoSecretsInOutput: with tokens configured, no log line, error or
// printed report contains them.
func TestNoSecretsInOutput(t *testing.T) {
	e := newEnv(t, world(time.Now()), "sqlite", "")
	e.slack.SetFault(func(method string, n int) slacktest.Fault {
		if n == 1 {
			return slacktest.Fault{SlackError: "invalid_auth"}
		}
		return slacktest.Fault{}
	})
	outs := []string{}
	r := e.once()
	outs = append(outs, r.stdout, r.stderr)
	for _, args := range [][]string{{"scan", "--config", e.cfg, "--output", "json"}, {"run", "--once", "--dry-run", "--config", e.cfg}} {
		r := watchdogd(t, e.environ(), args...)
		outs = append(outs, r.stdout, r.stderr)
	}
	for _, o := range outs {
		if strings.Contains(o, slackToken) || strings.Contains(o, kandevToken) {
			t.Fatalf("a token leaked:\n%s", o)
		}
	}
}

// TestWithoutSlack: with no slack: block, Slack steps are logged and the
// daemon warns once instead of failing.
func TestWithoutSlack(t *testing.T) {
	e := newEnv(t, world(time.Now()), "sqlite", "")
	noSlack := strings.Replace(baseConfig, "slack:\n  api_url: {{.slack}}\n  timeout: 1s\n  default_channel: C-alerts\n  max_messages_per_cycle: 100\n  routes:\n    - match: {workspace_id: ws-ops}\n      channel: C-ops\n    - match: {workspace_id: ws-docs}\n      channel: C-docs\n", "", 1)
	writeConfigText(t, e, noSlack)
	r := e.once()
	if n := len(logLines(r.stderr, "no slack: block")); n != 1 {
		t.Fatalf("%d warnings:\n%s", n, r.stderr)
	}
	if n := len(logLines(r.stderr, `"msg":"watchdogd finding"`)); n != 9 {
		t.Fatalf("%d findings logged, want 9:\n%s", n, r.stderr)
	}
	if n := len(e.slack.Messages()); n != 0 {
		t.Fatalf("%d Slack messages", n)
	}
}
