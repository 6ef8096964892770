package cycle

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
)

// TestCycleTimeoutLeavesTheRestWaiting: four posts due on one channel, paced
// at one a second, in a cycle with 1.5 s left. One or two go out (two on an
// idle machine); the others never leave (their slot would come after the
// deadline), so they wait for the next cycle as held actions do: no attempt
// spent, no retry logged, and not marked uncertain (which would make the
// next attempt search Slack's history for a message that cannot exist).
func TestCycleTimeoutLeavesTheRestWaiting(t *testing.T) {
	b := kandevdb.NewBuilder(time.Now())
	for _, id := range []string{"s1", "s2", "s3", "s4"} {
		s := b.Session(id, "Task "+id, "ws", "RUNNING", time.Hour, "")
		s.Turn("turn-"+id, 40*time.Minute, -1, "").Agent("tool_call", 30*time.Minute)
	}
	c, srv, m := testCycle(t, b.DS, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	res, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sent := len(srv.Messages())
	if sent < 1 || sent > 2 || res.Counts["delivered"] != sent || res.Counts["deferred"] != 4-sent || res.Counts["retried"] != 0 {
		t.Fatalf("first cycle: %d posts, outcomes %v", sent, res.Counts)
	}
	for _, a := range res.Plan.Actions {
		got, err := c.Store.Action(context.Background(), a.Key)
		if err != nil {
			t.Fatal(err)
		}
		if got.State == model.StatePending && (got.Attempts != 0 || got.Uncertain) {
			t.Errorf("an action that never left: attempts %d, uncertain %v", got.Attempts, got.Uncertain)
		}
	}

	res, err = c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.Messages()) != 4 || res.Counts["delivered"] != 4-sent {
		t.Fatalf("second cycle: %d posts, outcomes %v", len(srv.Messages()), res.Counts)
	}
	if n := srv.Calls("conversations.history"); n != 0 {
		t.Errorf("%d history searches for actions that never left", n)
	}
	if n := testutil.ToFloat64(m.Actions.WithLabelValues("slack", "retried")); n != 0 {
		t.Errorf("retried counted %v times", n)
	}
}
