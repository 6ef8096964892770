package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSlackClickOnAChangedQuestion: through the real binary, kandev
// changes a pending question's options after its message went out. A
// click on "pgx" (first on the message, second now) answers pgx, not what
// sits first now; a click on "pgx" whose option kandev replaced by "DROP
// the database" at that place answers nothing, the person told the
// question changed, the message left as it was.
func TestSlackClickOnAChangedQuestion(t *testing.T) {
	listen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	e, _ := interactiveEnv(t, "    mode: http\n    listen: "+listen+"\n    signing_secret_file: {{.dir}}/signing\n")
	posts := firstPosts(e.slack)
	for session, opts := range map[string]string{
		"sess-a": `[{"option_id":"pq","label":"lib/pq"},{"option_id":"pgx","label":"pgx"}]`,
		"sess-b": `[{"option_id":"drop","label":"DROP the database"},{"option_id":"pq","label":"lib/pq"}]`,
	} {
		if _, err := e.kandev.DB().Exec(`UPDATE task_session_messages SET metadata = json_set(metadata, '$.question.options', json(?))
			WHERE type = 'clarification_request' AND task_session_id = ?`, opts, session); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 20*time.Second, "the ledger's findings to show kandev's new options", func() bool {
		n := 0
		for _, s := range []string{"sess-a", "sess-b"} {
			ep, err := e.ledger().Episode(context.Background(), episodeOf(t, e, s))
			if err == nil && strings.Contains(ep.Finding, `"option_id":"pq","label":"lib/pq"},{"option_id":"pgx"`) ||
				err == nil && strings.Contains(ep.Finding, "DROP the database") {
				n++
			}
		}
		return n == 2
	})
	for _, s := range []string{"sess-a", "sess-b"} {
		if c := post(t, listen, click(t, posts[s], "U0ALICE", "pgx"), nil); c != 200 {
			t.Fatalf("click on %s: %d", s, c)
		}
	}
	ephemeralTo(t, e.slack, "U0ALICE", "the question changed in kandev since this message was posted: it no longer offers “pgx”")
	waitFor(t, 20*time.Second, "kandev answered for sess-a", func() bool { return len(e.ws.Responds()) > 0 })
	time.Sleep(3 * time.Second) // cycles more: nothing else is sent
	if r := e.ws.Responds(); len(r) != 1 || r[0].PendingID != "p-a" || len(r[0].Answers) != 1 || r[0].Answers[0].Options[0] != "pgx" {
		t.Fatalf("kandev's responds %+v, want one: pgx for p-a", r)
	}
	for _, m := range e.slack.Messages() {
		if m.TS == posts["sess-b"].TS && m.Edits != 0 {
			t.Fatalf("sess-b's message was edited %d times", m.Edits)
		}
	}
}
