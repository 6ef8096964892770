package cycle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
)

// TestFrozenFirstMessage: Slack refuses to edit the first message — the
// workspace's edit window closed, or another app posted it (the bot token
// was replaced by another app's). The resolve says it cleared in the
// thread instead, once, even when the answer to that reply is lost; it is
// not a failure anyone is paged for.
func TestFrozenFirstMessage(t *testing.T) {
	for _, code := range []string{"edit_window_closed", "cant_update_message"} {
		t.Run(code, func(t *testing.T) {
			c, srv, m, db := testCycleDB(t, oneStall().DS, nil)
			clock := time.Now()
			c.Now = func() time.Time { return clock }
			ctx := context.Background()
			if _, err := c.Run(ctx); err != nil {
				t.Fatal(err)
			}
			first := srv.Messages()
			if len(first) != 1 {
				t.Fatalf("first messages %+v", first)
			}
			// chat.update is refused; the first reply lands but its answer
			// is lost (a 5xx after Slack recorded it).
			replies := 0
			srv.SetFault(func(method string, n int) slacktest.Fault {
				switch method {
				case "chat.update":
					return slacktest.Fault{SlackError: code}
				case "chat.postMessage":
					if replies++; replies == 1 {
						return slacktest.Fault{Status: 502, Record: true}
					}
				}
				return slacktest.Fault{}
			})
			if _, err := db.DB().Exec(`UPDATE task_session_turns SET completed_at = ? WHERE id = 'turn-1'`, kandevdb.TS(time.Now())); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if _, err := c.Run(ctx); err != nil {
					t.Fatal(err)
				}
				clock = clock.Add(time.Minute) // past the retry's backoff
			}
			msgs := srv.Messages()
			if len(msgs) != 2 || msgs[1].ThreadTS != first[0].TS || !strings.Contains(msgs[1].Text, "Cleared after") || msgs[0].Edits != 0 {
				t.Fatalf("messages %+v, want the first one unedited and one cleared reply in its thread", msgs)
			}
			// The lost reply was found in the thread, not posted again.
			if n, f := srv.Calls("chat.postMessage"), srv.Calls("conversations.replies"); n != 2 || f < 1 {
				t.Fatalf("%d posts and %d thread reads, want 2 posts (the first message, one reply) and a read", n, f)
			}
			if got := testutil.ToFloat64(m.Actions.WithLabelValues(string(model.ActionSlackUpdate), "failed")); got != 0 {
				t.Fatalf("%v failed resolves", got)
			}
			if got := testutil.ToFloat64(m.Actions.WithLabelValues(string(model.ActionSlackUpdate), "delivered")); got != 1 {
				t.Fatalf("%v delivered resolves, want 1", got)
			}
		})
	}
}

// TestClearedEditKeepsTheFirstPost: the resolve edit is the first post as
// it was sent ("waiting 20 min", with the question), under the cleared
// line — not the finding rendered again at its last age — even after the
// question has been repeated for hours and the decision no longer loads
// the bodies of its thread replies.
func TestClearedEditKeepsTheFirstPost(t *testing.T) {
	c, srv, _, db := testCycleDB(t, oneQuestion().DS, nil)
	clock := time.Now()
	c.Now = func() time.Time { return clock }
	ctx := context.Background()
	for range 4 { // the first post, then hourly reminders in its thread
		if _, err := c.Run(ctx); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(time.Hour)
	}
	msgs := srv.Messages()
	if len(msgs) != 4 || msgs[3].ThreadTS != msgs[0].TS {
		t.Fatalf("%d messages before the answer, want the first post and three reminders in its thread", len(msgs))
	}
	if _, err := db.DB().Exec(`UPDATE task_session_messages SET metadata = json_set(metadata, '$.status', 'answered') WHERE type = 'clarification_request'`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	edited := srv.Messages()[0]
	if text := blocksText(t, edited); edited.Edits != 1 || !strings.HasPrefix(edited.Text, "Cleared after") ||
		!strings.Contains(text, "Question waiting 20 min on") || !strings.Contains(text, "Pick A or B?") {
		t.Fatalf("the cleared edit (%d edits): %s", edited.Edits, text)
	}
}
