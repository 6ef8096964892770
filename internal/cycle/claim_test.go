package cycle

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/kandevapi/kandevtest"
	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
)

// TestSlackAttemptEndsWithinItsClaim: Slack takes the first post but
// answers only after 3 s, past the end of a 2 s claim. The attempt stops
// before another process may take the claim over, and is retried as one
// that may have landed: the retry finds the post in the channel's history
// and settles from it, so the message goes out once. (Without the
// deadline the attempt waits out the answer and is delivered at once.)
func TestSlackAttemptEndsWithinItsClaim(t *testing.T) {
	c, srv, _ := testCycle(t, oneStall().DS, nil)
	c.Config.State.ClaimTTL = 2 * time.Second
	srv.SetFault(func(method string, _ int) slacktest.Fault {
		if method == "chat.postMessage" {
			return slacktest.Fault{Delay: 3 * time.Second, Record: true} // landed, answered late
		}
		return slacktest.Fault{}
	})
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Counts["retried"] != 1 || len(srv.Messages()) != 1 {
		t.Fatalf("first cycle: outcomes %v, %d messages: want one retry of a post that landed", res.Counts, len(srv.Messages()))
	}
	key := res.Plan.Actions[0].Key
	cutAtClaimsEnd(t, c, key)
	srv.SetFault(nil)
	_, a := rerun(t, c, 10*time.Minute, key)
	if a.State != model.StateDelivered || len(srv.Messages()) != 1 || srv.Calls("chat.postMessage") != 1 {
		t.Fatalf("retry: action %s (%s), %d messages, %d posts: want delivered from evidence, one post",
			a.State, a.Error, len(srv.Messages()), srv.Calls("chat.postMessage"))
	}
}

// TestCancelAndNudgeEndsWithinItsClaim: kandev takes the cancel but the
// session stays RUNNING, so the attempt would wait up to 30 s for it to
// settle. With state.claim_ttl at 4 s it stops before another process may
// take the claim over (else both would act on the session), and is left
// to retry as an attempt whose cancel may have landed, saying why.
func TestCancelAndNudgeEndsWithinItsClaim(t *testing.T) {
	c, ws, _ := cancelAndNudgeCycle(t, 0)
	ws.OnCancel = nil // the session never settles
	c.Config.State.ClaimTTL = 4 * time.Second
	start := time.Now()
	key := firstAttempt(t, c, ws, 1)
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("the attempt ran %s with a claim of %s", took, c.Config.State.ClaimTTL)
	}
	cutAtClaimsEnd(t, c, key)
}

// cutAtClaimsEnd checks that the action's attempt was cut at its claim's
// end: owed, marked as one that may have landed, the error naming the TTL.
func cutAtClaimsEnd(t *testing.T, c *Cycle, key string) {
	t.Helper()
	a, err := c.Store.Action(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("(state.claim_ttl %s)", c.Config.State.ClaimTTL)
	if a.State != model.StatePending || !a.Uncertain || !strings.Contains(a.Error, want) {
		t.Fatalf("action %s uncertain=%v (%s): want pending, uncertain, naming %s", a.State, a.Uncertain, a.Error, want)
	}
	t.Logf("retry: %s", a.Error)
}

// TestNudgeEndsWithinItsClaim: kandev takes a nudge (resuming a session a
// restart parked) but answers only after 3 s, past the end of a 2 s claim
// (the client's own timeout is 5 s). The attempt stops before the claim may
// be taken over and is left owed as one that may have landed; the retry
// sends the same client_message_id, which kandev deduplicates, so the agent
// gets one message.
func TestNudgeEndsWithinItsClaim(t *testing.T) {
	b := kandevdb.NewBuilder(time.Now())
	s := b.Session("s1", "Write release notes", "ws", "WAITING_FOR_INPUT", time.Hour,
		fmt.Sprintf(`{"interrupted_at": %q}`, b.Now.Add(-25*time.Minute).UTC().Format(time.RFC3339)))
	s.Turn("turn-1", 40*time.Minute, 26*time.Minute, "").Agent("message", 27*time.Minute)
	c, _, _ := testCycle(t, b.DS, nil)
	ws := kandevAPI(t, c, map[string]string{"s1": "WAITING_FOR_INPUT"})
	c.Config.Policy["interrupted_session"].Steps = []model.Step{{Action: model.ActionNudge}}
	c.Config.State.ClaimTTL = 2 * time.Second
	var slow atomic.Bool
	slow.Store(true)
	ws.OnMessage = func(kandevtest.WSMessage) { // taken, answered late
		if slow.Load() {
			time.Sleep(3 * time.Second)
		}
	}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Counts["retried"] != 1 || len(ws.Messages()) != 1 {
		t.Fatalf("first cycle: outcomes %v, %d kandev messages: want one retry of a nudge that landed", res.Counts, len(ws.Messages()))
	}
	key := res.Plan.Actions[0].Key
	cutAtClaimsEnd(t, c, key)
	slow.Store(false)
	_, a := rerun(t, c, 10*time.Minute, key)
	if a.State != model.StateDelivered || len(ws.Messages()) != 1 || ws.Duplicates() != 1 {
		t.Fatalf("retry: action %s (%s), %d kandev messages, %d deduplicated: want delivered, one message, one replay deduplicated",
			a.State, a.Error, len(ws.Messages()), ws.Duplicates())
	}
}

// TestSlackUpdateEndsWithinItsClaim: the episode cleared and Slack takes
// the edit of its first message but answers only after 3 s, past the end of
// a 2 s claim. The attempt stops in time and the edit stays owed; the retry
// edits again (an edit to the same text is harmless), so the message ends
// saying the problem cleared.
func TestSlackUpdateEndsWithinItsClaim(t *testing.T) {
	c, srv, _, db := testCycleDB(t, oneStall().DS, nil)
	c.Config.State.ClaimTTL = 2 * time.Second
	ctx := context.Background()
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := finishTurn(db, "turn-1"); err != nil {
		t.Fatal(err)
	}
	srv.SetFault(func(method string, _ int) slacktest.Fault {
		if method == "chat.update" {
			return slacktest.Fault{Delay: 3 * time.Second, Record: true}
		}
		return slacktest.Fault{}
	})
	res, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Plan.Resolve) != 1 || res.Counts["retried"] != 1 {
		t.Fatalf("second cycle: resolve %v, outcomes %v: want the edit retried", res.Plan.Resolve, res.Counts)
	}
	key := ""
	for _, a := range res.Plan.Actions {
		if a.Kind == model.ActionSlackUpdate {
			key = a.Key
		}
	}
	cutAtClaimsEnd(t, c, key)
	srv.SetFault(nil)
	_, a := rerun(t, c, 10*time.Minute, key)
	msgs := srv.Messages()
	if a.State != model.StateDelivered || len(msgs) != 1 || srv.Calls("chat.postMessage") != 1 || msgs[0].Edits != 2 {
		t.Fatalf("retry: action %s (%s), messages %+v: want delivered, the one message edited twice", a.State, a.Error, msgs)
	}
}

// TestNoNudgeOnceTheQuestionShowsAgain: a nudge decided for a question
// kandev hid (shadowed, where a nudge is allowed) is not sent when, by the
// time it goes out, kandev shows the question again: a person owes the
// answer, and the nudge would destroy the question. It is superseded.
func TestNoNudgeOnceTheQuestionShowsAgain(t *testing.T) {
	b := oneQuestion()
	boot := b.Ago(5 * time.Minute)
	// A resume's boot turn, unmarked and newer: released kandev hides the
	// question asked on turn-real.
	b.DS.Turns = append(b.DS.Turns, kandevdb.Turn{ID: "turn-boot", SessionID: "s1", TaskID: "task-s1",
		StartedAt: boot, CreatedAt: &boot, CompletedAt: &boot, Metadata: kandevdb.P("{}")})
	c, _, m := testCycle(t, b.DS, func(db *kandevdb.SQLite) {
		// Before the delivery the boot turn is gone: the question shows.
		if _, err := db.DB().Exec(`DELETE FROM task_session_turns WHERE id = 'turn-boot'`); err != nil {
			t.Error(err)
		}
	})
	ws := kandevAPI(t, c, map[string]string{"s1": "WAITING_FOR_INPUT"})
	c.Config.Policy["shadowed_clarification"].Steps = []model.Step{{Action: model.ActionNudge}}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Plan.Actions) != 1 || res.Plan.Actions[0].Kind != model.ActionNudge {
		t.Fatalf("decided %+v, want the hidden question's nudge", res.Plan.Actions)
	}
	if n := len(ws.Messages()); n != 0 {
		t.Fatalf("%d nudges sent to a question a person can answer again", n)
	}
	a, _ := c.Store.Action(context.Background(), res.Plan.Actions[0].Key)
	if a.State != model.StateSuperseded || !strings.Contains(a.Error, "a nudge would destroy it") ||
		testutil.ToFloat64(m.Actions.WithLabelValues("nudge", "superseded")) != 1 {
		t.Fatalf("action %s (%s)", a.State, a.Error)
	}
}
