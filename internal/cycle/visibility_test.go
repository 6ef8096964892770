package cycle

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
)

// TestQuestionHiddenThenVisible follows a shadowed question end to end: a
// question is paged as unanswered; a resume writes a newer, unmarked turn, so
// released kandev hides the question (shadowed); the turn goes away and the
// question is visible again; then it is answered. One episode, one thread:
// the first post, a reply for each change of visibility, and the first post
// edited once when it clears.
func TestQuestionHiddenThenVisible(t *testing.T) {
	c, srv, _, db := testCycleDB(t, oneQuestion().DS, nil)
	ctx := context.Background()
	cycle := func(step string) []slacktest.Message {
		t.Helper()
		if _, err := c.Run(ctx); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		return srv.Messages()
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.DB().Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}

	msgs := cycle("asked")
	if len(msgs) != 1 || msgs[0].ThreadTS != "" || !strings.Contains(blocksText(t, msgs[0]), "Question waiting 20 min on") {
		t.Fatalf("first post: %+v", msgs)
	}
	first := msgs[0]

	// A resume boot turn, unmarked, newer than the question's open turn.
	boot := kandevdb.TS(time.Now().Add(-5 * time.Minute))
	if err := db.Write(ctx, kandevdb.Dataset{Turns: []kandevdb.Turn{{ID: "turn-boot", SessionID: "s1", TaskID: "task-s1",
		StartedAt: boot, CreatedAt: &boot, CompletedAt: &boot, Metadata: kandevdb.P("{}")}}}); err != nil {
		t.Fatal(err)
	}
	msgs = cycle("hidden")
	if len(msgs) != 2 || msgs[1].ThreadTS != first.TS || !strings.Contains(blocksText(t, msgs[1]), "Hidden question, asked 20 min ago, on") {
		t.Fatalf("after the resume: %+v", msgs)
	}

	exec(`DELETE FROM task_session_turns WHERE id = 'turn-boot'`)
	msgs = cycle("visible")
	if len(msgs) != 3 || msgs[2].ThreadTS != first.TS || !strings.Contains(blocksText(t, msgs[2]), "Visible in kandev again:") {
		t.Fatalf("after the boot turn went: %+v", msgs)
	}
	if msgs = cycle("unchanged"); len(msgs) != 3 {
		t.Fatalf("a cycle with no change posted: %+v", msgs[3:])
	}
	if eps, err := c.Store.Episodes(ctx, false, 0); err != nil || len(eps) != 1 || eps[0].KindChanges != 2 {
		t.Fatalf("episodes: %+v %v", eps, err)
	}

	exec(`UPDATE task_session_messages SET metadata = json_set(metadata, '$.status', 'answered') WHERE type = 'clarification_request'`)
	msgs = cycle("answered")
	if len(msgs) != 3 || msgs[0].Edits != 1 || !strings.Contains(blocksText(t, msgs[0]), "answered") {
		t.Fatalf("after the answer: %+v", msgs)
	}
}

// blocksText is a message's blocks as JSON, for substring checks.
func blocksText(t *testing.T, m slacktest.Message) string {
	t.Helper()
	var raw strings.Builder
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m.Blocks); err != nil {
		t.Fatal(err)
	}
	return raw.String()
}
