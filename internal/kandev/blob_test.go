package kandev_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// TestBlobValuesNeverBlindTheScan: SQLite keeps whatever storage class a
// writer binds, so a row written from a []byte holds a BLOB in one of
// kandev's TEXT columns. SQLite's JSON functions refuse a BLOB ("JSON
// cannot hold BLOB values"), and the statements put ids, types, content
// and metadata into JSON: one such value failed the whole snapshot, and
// every session went unseen. Each session below has one BLOB where a
// statement reads it, and each must still be read whole.
// SQLite only: PostgreSQL's text columns cannot hold a BLOB.
func TestBlobValuesNeverBlindTheScan(t *testing.T) {
	question := `type = 'clarification_request'`
	// Each case's column is set to value, by default its own bytes as a
	// BLOB, in the rows of its session that where selects.
	cases := []struct{ session, column, where, value string }{
		{"msg-id", "task_session_messages.id", question, ""},
		{"msg-author", "task_session_messages.author_type", question, ""},
		{"msg-type", "task_session_messages.type", `type = 'message'`, ""}, // the newest update's type (below)
		{"msg-content", "task_session_messages.content", question, ""},
		{"msg-bytes", "task_session_messages.content", question, "X'C328FF'"}, // not UTF-8 either
		{"msg-metadata", "task_session_messages.metadata", question, ""},
		{"turn-id", "task_session_turns.id", `completed_at IS NULL`, ""}, // the open-turn probe
		// An update julianday cannot read sends the turn through the
		// second messages statement, which must take a BLOB too.
		{"unordered", "task_session_messages.content", question, ""},
		{"unordered-type", "task_session_messages.type", `type = 'tool_read'`, ""},
		// kandev's turn is a lifecycle turn, so the conversational probe
		// finds the current turn (below).
		{"lifecycle", "task_session_turns.id", `id = 't-lifecycle'`, ""},
		// The metadata validity test names the turn (below).
		{"malformed", "task_session_turns.id", `completed_at IS NULL`, ""},
	}
	b := kandevdb.NewBuilder(now)
	for _, c := range cases {
		s := b.Session(c.session, "task "+c.session, "ws", "WAITING_FOR_INPUT", time.Hour, "")
		said, open := 25*time.Minute, time.Duration(-1)
		switch c.session {
		case "msg-type":
			said = 10 * time.Minute // after the question: the turn's newest update
		case "lifecycle":
			open = 5 * time.Minute
		}
		s.Turn("t-"+c.session, 30*time.Minute, open, "").
			Agent("message", said).
			Clarification("p-"+c.session, "q1", "Title", "Which one?", nil, "pending", 20*time.Minute, nil)
		switch c.session {
		case "lifecycle":
			s.Turn("t-boot", 4*time.Minute, 3*time.Minute, `{"lifecycle_only": true}`)
		case "malformed":
			b.DS.Turns[len(b.DS.Turns)-1].Metadata = kandevdb.P("{")
		}
	}
	for _, id := range []string{"unordered", "unordered-type"} {
		b.DS.Messages = append(b.DS.Messages, kandevdb.Message{ID: "m-lower-" + id, SessionID: id, TaskID: "task-" + id,
			TurnID: "t-" + id, Author: "agent", Type: "tool_read", CreatedAt: "2026-11-29t11:36:00z", UpdatedAt: "2026-11-29t11:36:00z"})
	}
	db := load(t, dialects[0], b.DS, kandevdb.Options{})
	for _, c := range cases {
		table, column, _ := strings.Cut(c.column, ".")
		value := c.value
		if value == "" {
			value = "CAST(" + column + " AS BLOB)"
		}
		q := "UPDATE " + table + " SET " + column + " = " + value + " WHERE task_session_id = ? AND " + c.where
		res, err := db.(*kandevdb.SQLite).DB().ExecContext(context.Background(), q, c.session)
		if err != nil {
			t.Fatalf("%s: %s: %v", c.session, q, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("%s: %s: %d rows, want 1", c.session, q, n)
		}
	}
	snap := snapshot(t, db.URL(), kandev.Options{})
	checkBlobSnapshot(t, snap)
	asked := map[string]bool{}
	for _, f := range scan.Findings(snap, scan.Options{Thresholds: scan.DefaultThresholds()}, now).Findings {
		if f.Kind == model.KindUnansweredClarification || f.Kind == model.KindShadowedClarification {
			asked[f.SessionID] = true
		}
	}
	for _, c := range cases {
		if !asked[c.session] {
			t.Errorf("%s: a BLOB in %s hid the pending question", c.session, c.column)
		}
	}
}

// checkBlobSnapshot checks what TestBlobValuesNeverBlindTheScan's sessions
// read besides their questions.
func checkBlobSnapshot(t *testing.T, snap *model.Snapshot) {
	t.Helper()
	newestType, current := "none", map[string]string{}
	for _, s := range snap.Sessions {
		if s.Current != nil {
			current[s.ID] = s.Current.ID
		}
		switch s.ID {
		case "msg-type":
			for _, m := range s.Messages {
				if m.Aggregate() {
					newestType = m.Type
				}
			}
		case "malformed":
			if !s.MalformedMetadata {
				t.Errorf("malformed: the turn's metadata was not found malformed")
			}
		}
	}
	if newestType != "message" {
		t.Errorf("msg-type: the newest update's type %q, want its text, message", newestType)
	}
	for _, id := range []string{"lifecycle", "malformed", "turn-id"} {
		if current[id] != "t-"+id {
			t.Errorf("%s: current turn %q, want t-%s", id, current[id], id)
		}
	}
	if len(snap.Malformed) != 1 || snap.Malformed[0] != (model.RowRef{Table: "task_session_turns", ID: "t-malformed"}) {
		t.Errorf("malformed rows %v, want the one turn t-malformed", snap.Malformed)
	}
}
