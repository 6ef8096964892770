package cycle

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/kandevapi"
	"github.com/watchdogd/watchdogd/internal/notify/kandevapi/kandevtest"
	"github.com/watchdogd/watchdogd/internal/notify/slack"
)

// cancelAndNudgeCycle is a cycle over one stalled session whose policy is
// cancel_and_nudge, against a kandev WebSocket server whose cancel completes
// the turn and parks the session after settle (kandev settles a cancel a
// moment later; 0 settles it before the reply).
func cancelAndNudgeCycle(t *testing.T, settle time.Duration) (*Cycle, *kandevtest.WSServer, *kandevdb.SQLite) {
	t.Helper()
	b := oneStall()
	c, _, _, db := testCycleDB(t, b.DS, nil)
	ws := kandevAPI(t, c, map[string]string{"s1": "RUNNING"})
	took := func(session string) { _ = park(db, session) } // may run after a failed test: nobody to tell
	ws.OnCancel = took
	if settle > 0 {
		ws.OnCancel = func(session string) { go func() { time.Sleep(settle); took(session) }() }
	}
	c.Config.Policy["stalled_turn"].Steps = []model.Step{{Action: model.ActionCancelAndNudge}}
	return c, ws, db
}

// kandevAPI points c's nudges at a kandev WebSocket server whose sessions
// are in states, through the real client (5 s timeout).
func kandevAPI(t *testing.T, c *Cycle, states map[string]string) *kandevtest.WSServer {
	t.Helper()
	ws := kandevtest.NewWSServer(states)
	t.Cleanup(ws.Close)
	kc, err := kandevapi.NewClient(ws.BaseURL(), "", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	connect(c, slackClientOf(c), kc)
	return ws
}

// slackClientOf is the Slack client c's outlets post through, nil when
// they have none.
func slackClientOf(c *Cycle) *slack.Client {
	if s, ok := c.Outlets[model.ActionSlack].Outlet.(*slack.Outlet); ok {
		return s.Client
	}
	return nil
}

// park ends session's turns and makes it promptable in kandev's database,
// as kandev does once a cancel took: its "Turn cancelled by user" row on
// the turn it closes.
func park(db *kandevdb.SQLite, session string) error {
	now := kandevdb.TS(time.Now())
	if _, err := db.DB().Exec(`INSERT INTO task_session_messages (id, task_session_id, task_id, turn_id, author_type, type, content, metadata, created_at, updated_at)
	  SELECT 'cancel-' || id, task_session_id, task_id, id, 'agent', 'status', 'Turn cancelled by user', '{"cancelled": true, "variant": "warning"}', ?, ?
	  FROM task_session_turns WHERE task_session_id = ? AND completed_at IS NULL`, now, now, session); err != nil {
		return err
	}
	if _, err := db.DB().Exec(`UPDATE task_session_turns SET completed_at = ? WHERE task_session_id = ?`, now, session); err != nil {
		return err
	}
	_, err := db.DB().Exec(`UPDATE task_sessions SET state = 'WAITING_FOR_INPUT' WHERE id = ?`, session)
	return err
}

// TestCancelAndNudge: the turn is cancelled, watchdogd waits until kandev
// shows the session promptable, then nudges with client_message_id.
func TestCancelAndNudge(t *testing.T) {
	c, ws, _ := cancelAndNudgeCycle(t, 300*time.Millisecond)
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Counts["delivered"] != 1 || len(ws.Cancels()) != 1 || len(ws.Messages()) != 1 {
		t.Fatalf("outcomes %v cancels %v messages %v", res.Counts, ws.Cancels(), ws.Messages())
	}
	if got := ws.Messages()[0]; got.ClientMessageID != kandevapi.ClientMessageID(res.Plan.Actions[0].Key) || got.Content == "" {
		t.Fatalf("nudge %+v", got)
	}
}

// TestCancelAndNudgeRetryDoesNotCancelAgain: the cancel went through but the
// nudge was lost (the connection dropped); the retry only nudges.
func TestCancelAndNudgeRetryDoesNotCancelAgain(t *testing.T) {
	c, ws, _ := cancelAndNudgeCycle(t, 0)
	failOnce(ws, "message.add", "close")
	key := firstAttempt(t, c, ws, 1)
	res, a := rerun(t, c, 10*time.Minute, key)
	wantRetry(t, a, ws, model.StateDelivered, 1, 1)
	if res.Counts["delivered"] != 1 {
		t.Fatalf("retry: outcomes %v", res.Counts)
	}
}

// failOnce fails the action's first injected request with code ("close"
// drops the connection instead of answering).
func failOnce(ws *kandevtest.WSServer, action, code string) {
	var n atomic.Int32
	ws.SetFail(func(a string) string {
		if a == action && n.Add(1) == 1 {
			return code
		}
		return ""
	})
}

// rerun runs c again at later (past any retry backoff) and returns the
// action's ledger row.
func rerun(t *testing.T, c *Cycle, later time.Duration, key string) (Result, model.Action) {
	t.Helper()
	at := time.Now().Add(later)
	c.Now = func() time.Time { return at }
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Store.Action(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return res, a
}

// firstAttempt runs the first cycle, whose attempt must end in a retry
// after cancels agent.cancel requests, and returns the action's key.
func firstAttempt(t *testing.T, c *Cycle, ws *kandevtest.WSServer, cancels int) string {
	t.Helper()
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Counts["retried"] != 1 || len(ws.Cancels()) != cancels || len(ws.Messages()) != 0 {
		t.Fatalf("first cycle: outcomes %v cancels %v messages %v", res.Counts, ws.Cancels(), ws.Messages())
	}
	return res.Plan.Actions[0].Key
}

// agentSpoke gives turn-1 fresh agent output: it is no longer stalled.
func agentSpoke(t *testing.T, db *kandevdb.SQLite) {
	t.Helper()
	if _, err := db.DB().Exec(`UPDATE task_session_messages SET updated_at = ? WHERE turn_id = 'turn-1'`, kandevdb.TS(time.Now())); err != nil {
		t.Fatal(err)
	}
}

// setState puts session s1 in state, in kandev's database and its API.
func setState(t *testing.T, db *kandevdb.SQLite, ws *kandevtest.WSServer, state string) {
	t.Helper()
	if _, err := db.DB().Exec(`UPDATE task_sessions SET state = ? WHERE id = 's1'`, state); err != nil {
		t.Fatal(err)
	}
	ws.SetState("s1", state)
}

// wantRetry checks how the retry left the action and what kandev got.
func wantRetry(t *testing.T, a model.Action, ws *kandevtest.WSServer, state model.State, cancels, messages int) {
	t.Helper()
	if a.State != state || len(ws.Cancels()) != cancels || len(ws.Messages()) != messages {
		t.Fatalf("retry: action %s uncertain=%v (%s), want %s; cancels %v, want %d; messages %v, want %d",
			a.State, a.Uncertain, a.Error, state, ws.Cancels(), cancels, ws.Messages(), messages)
	}
}

// TestCancelAndNudgeOwedAfterItsEpisodeResolves: the cancel went through
// and kandev answered the nudge with a retryable error. The cancel
// completed the turn, so the next scan no longer sees the finding and the
// episode resolves; the nudge is still owed (the agent sits idle because
// of watchdogd) and goes out, without a second cancel.
func TestCancelAndNudgeOwedAfterItsEpisodeResolves(t *testing.T) {
	c, ws, _ := cancelAndNudgeCycle(t, 0)
	failOnce(ws, "message.add", "INTERNAL_ERROR")
	key := firstAttempt(t, c, ws, 1)
	res, a := rerun(t, c, 10*time.Minute, key)
	if len(res.Plan.Resolve) != 1 {
		t.Fatalf("the episode should resolve once the cancel completed its turn: plan %+v", res.Plan)
	}
	wantRetry(t, a, ws, model.StateDelivered, 1, 1)
}

// failingTasks fails the next n task reads: kandev's database blipped
// right before a delivery.
type failingTasks struct {
	Reader
	n int
}

func (f *failingTasks) TaskSnapshot(ctx context.Context, taskID string) (*model.Snapshot, error) {
	if f.n > 0 {
		f.n--
		return nil, errors.New("injected: database is locked")
	}
	return f.Reader.TaskSnapshot(ctx, taskID)
}

// TestCancelAndNudgeRetryAfterAFailedFence: the first attempt could not
// read kandev before acting, so it sent nothing. By the retry the agent
// has produced output again (the episode waits out its resolve_hold): the
// retry is fenced like a first attempt and cancels nothing.
func TestCancelAndNudgeRetryAfterAFailedFence(t *testing.T) {
	c, ws, db := cancelAndNudgeCycle(t, 0)
	c.Config.Policy["stalled_turn"].ResolveHold = time.Hour
	c.Reader = &failingTasks{Reader: c.Reader, n: 1}
	key := firstAttempt(t, c, ws, 0)
	agentSpoke(t, db)
	_, a := rerun(t, c, time.Minute, key)
	wantRetry(t, a, ws, model.StateSuperseded, 0, 0)
}

// TestCancelAndNudgeNewTurnAfterTheCancel: the cancel went through, the
// nudge's answer was lost, and before the retry someone prompted the agent:
// the session runs a new turn. The retry neither cancels that turn nor
// nudges.
func TestCancelAndNudgeNewTurnAfterTheCancel(t *testing.T) {
	c, ws, db := cancelAndNudgeCycle(t, 0)
	failOnce(ws, "message.add", "close")
	key := firstAttempt(t, c, ws, 1)
	newTurn(t, db)
	ws.SetState("s1", "RUNNING")
	_, a := rerun(t, c, time.Minute, key)
	wantRetry(t, a, ws, model.StateSuperseded, 1, 0)
}

// TestCancelAndNudgeRetryCancelsWhenTheFirstDidNotTake: the connection
// dropped before kandev took the cancel, so the session still runs the
// stalled turn at the retry: the retry cancels it (once) and nudges.
func TestCancelAndNudgeRetryCancelsWhenTheFirstDidNotTake(t *testing.T) {
	c, ws, _ := cancelAndNudgeCycle(t, 0)
	failOnce(ws, "agent.cancel", "close")
	key := firstAttempt(t, c, ws, 0)
	_, a := rerun(t, c, time.Minute, key)
	wantRetry(t, a, ws, model.StateDelivered, 1, 1)
}

// TestCancelAndNudgeRetryLeavesARecoveredTurnAlone: the connection dropped
// on the cancel, so watchdogd cannot know whether kandev took it. By the
// retry the session still runs the same turn, but its agent has produced
// output again: the retry cancels no working agent, nor waits on it; the
// nudge stays owed (uncertain) until the turn ends, counted as deferred
// (a wait, which must not raise WatchdogdActionsStuck), not as retried.
func TestCancelAndNudgeRetryLeavesARecoveredTurnAlone(t *testing.T) {
	c, ws, db := cancelAndNudgeCycle(t, 0)
	c.Config.Policy["stalled_turn"].ResolveHold = time.Hour
	failOnce(ws, "agent.cancel", "close")
	key := firstAttempt(t, c, ws, 0)
	agentSpoke(t, db)
	res, a := rerun(t, c, time.Minute, key)
	wantRetry(t, a, ws, model.StatePending, 0, 0)
	if res.Counts["deferred"] != 1 || !a.Uncertain {
		t.Fatalf("retry: outcomes %v, uncertain %v: want deferred, still owed", res.Counts, a.Uncertain)
	}
}

// TestCancelAndNudgeSessionEndedAfterTheCancel: the cancel went through,
// the nudge's answer was lost, and before the retry someone ended the
// session. Nothing is owed: the action is superseded, not a failure that
// pages anyone.
func TestCancelAndNudgeSessionEndedAfterTheCancel(t *testing.T) {
	c, ws, db := cancelAndNudgeCycle(t, 0)
	failOnce(ws, "message.add", "close")
	key := firstAttempt(t, c, ws, 1)
	setState(t, db, ws, "COMPLETED")
	_, a := rerun(t, c, time.Minute, key)
	wantRetry(t, a, ws, model.StateSuperseded, 1, 0)
}

// TestCancelAndNudgeNoAgent: kandev has no agent process behind the
// RUNNING session (a backend restart lost it), so it refuses agent.cancel
// with an INTERNAL_ERROR that no retry changes. The action fails at once,
// saying what to do, and is not tried again every backoff.
func TestCancelAndNudgeNoAgent(t *testing.T) {
	c, ws, _ := cancelAndNudgeCycle(t, 0)
	ws.SetNoAgent("s1")
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	key := res.Plan.Actions[0].Key
	if res.Counts["failed"] != 1 {
		t.Fatalf("outcomes %v, want the action failed", res.Counts)
	}
	_, a := rerun(t, c, time.Hour, key)
	wantRetry(t, a, ws, model.StateFailed, 1, 0)
	if !strings.Contains(a.Error, "no agent process for session s1") || !strings.Contains(a.Error, "resume or stop the session in kandev") ||
		!strings.Contains(a.Error, "no execution for session") {
		t.Errorf("error %q does not say what happened and what to do", a.Error)
	}
}

// TestCancelAndNudgeRefusedNudge: the cancel went through and kandev
// showed the session promptable, but refused the nudge (VALIDATION_ERROR).
// The session is read once more: one that runs a new turn by then (someone
// prompted it) or has ended owes nothing; otherwise the refusal stands. The
// nudge is never sent twice.
func TestCancelAndNudgeRefusedNudge(t *testing.T) {
	for _, tc := range []struct {
		name  string
		then  func(t *testing.T, db *kandevdb.SQLite) // what happens in kandev before it answers
		state model.State
	}{
		{"a new turn started", newTurn, model.StateSuperseded},
		{"the session ended", func(t *testing.T, db *kandevdb.SQLite) {
			if _, err := db.DB().Exec(`UPDATE task_sessions SET state = 'COMPLETED' WHERE id = 's1'`); err != nil {
				t.Error(err)
			}
		}, model.StateSuperseded},
		{"nothing changed", func(*testing.T, *kandevdb.SQLite) {}, model.StateFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ws, db := cancelAndNudgeCycle(t, 0)
			var adds atomic.Int32
			ws.SetFail(func(action string) string {
				if action != "message.add" {
					return ""
				}
				adds.Add(1)
				tc.then(t, db)
				return "VALIDATION_ERROR"
			})
			res, err := c.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			a, err := c.Store.Action(context.Background(), res.Plan.Actions[0].Key)
			if err != nil {
				t.Fatal(err)
			}
			wantRetry(t, a, ws, tc.state, 1, 0)
			if adds.Load() != 1 {
				t.Errorf("message.add sent %d times, want once", adds.Load())
			}
		})
	}
}

// newTurn has someone prompt s1: a new open turn, the session RUNNING.
func newTurn(t *testing.T, db *kandevdb.SQLite) {
	b := kandevdb.NewBuilder(time.Now())
	s := b.Session("s1", "Fix login", "ws", "RUNNING", time.Hour, "")
	s.Turn("turn-2", 0, -1, "").Agent("message", 0)
	if err := db.Write(context.Background(), kandevdb.Dataset{Turns: b.DS.Turns, Messages: b.DS.Messages}); err != nil {
		t.Error(err)
	}
	if _, err := db.DB().Exec(`UPDATE task_sessions SET state = 'RUNNING' WHERE id = 's1'`); err != nil {
		t.Error(err)
	}
}

// TestCancelAndNudgeCancelEscalated: the agent did not acknowledge the
// cancel in time, so kandev answered INTERNAL_ERROR, but it had already
// unblocked the turn, which ended: the session is promptable and the
// finding gone. The cancel may have landed, so the retry is not fenced on
// the finding (its episode resolves) and the nudge it owes goes out.
func TestCancelAndNudgeCancelEscalated(t *testing.T) {
	c, ws, db := cancelAndNudgeCycle(t, 0)
	var n atomic.Int32
	ws.SetFail(func(action string) string {
		if action != "agent.cancel" || n.Add(1) > 1 {
			return ""
		}
		if err := park(db, "s1"); err != nil {
			t.Error(err)
		}
		ws.SetState("s1", "WAITING_FOR_INPUT")
		return "INTERNAL_ERROR"
	})
	key := firstAttempt(t, c, ws, 0)
	res, a := rerun(t, c, 10*time.Minute, key)
	if len(res.Plan.Resolve) != 1 {
		t.Fatalf("the episode should resolve once the turn ended: plan %+v", res.Plan)
	}
	wantRetry(t, a, ws, model.StateDelivered, 0, 1)
}
