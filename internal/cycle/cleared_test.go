package cycle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

// TestClearedOnATurnThatMovedOn: a question answered in a way that moves
// the session to a new turn (a detached question answered after a restart
// resumes the agent in a new turn) clears as "answered", read from its rows
// on the turn it was asked in; the first message is edited to say so.
func TestClearedOnATurnThatMovedOn(t *testing.T) {
	c, srv, _, db := testCycleDB(t, oneQuestion().DS, nil)
	ctx := context.Background()
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Messages()); n != 1 {
		t.Fatalf("%d posts, want the question's", n)
	}
	now := kandevdb.TS(time.Now())
	if _, err := db.DB().Exec(`UPDATE task_session_messages SET metadata = json_set(metadata, '$.status', 'answered') WHERE type = 'clarification_request';
		UPDATE task_session_turns SET completed_at = ? WHERE id = 'turn-real'`, now); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(ctx, kandevdb.Dataset{Turns: []kandevdb.Turn{{ID: "turn-next", SessionID: "s1", TaskID: "task-s1",
		StartedAt: now, CreatedAt: &now, Metadata: kandevdb.P("{}")}}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Plan.Resolve) != 1 || res.Plan.Resolve[0].Reason.Words() != "answered" {
		t.Fatalf("resolved %+v, want answered", res.Plan.Resolve)
	}
	if m := srv.Messages()[0]; m.Edits != 1 || !strings.Contains(blocksText(t, m), "answered") {
		t.Fatalf("first message %+v", m)
	}
}
