package kandev_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// TestNullIDsNeverBlindTheScan: SQLite's TEXT PRIMARY KEY admits NULL, so a
// row written by hand or by another tool can have no id. kandev cannot read
// such a row (its ids scan into strings), but until 2026-12-02 one failed
// the whole snapshot ("want 4 fields") and every session went unseen. Each
// session below has one; each must be read as far as it can be, listed as
// a row kandev cannot read, and leave the others whole.
// SQLite only: PostgreSQL's primary keys are NOT NULL.
func TestNullIDsNeverBlindTheScan(t *testing.T) {
	b := kandevdb.NewBuilder(now)
	ask := func(tb *kandevdb.TurnB, id string) {
		tb.Clarification("p-"+id, "q1", "Title", "Which one?", nil, "pending", 20*time.Minute, nil)
	}
	// A session that has no id: nothing could name it to nudge or link it.
	ask(b.Session("null-session", "T", "ws", "WAITING_FOR_INPUT", time.Hour, "").Turn("t-null-session", 30*time.Minute, -1, ""), "null-session")
	// Its only open turn has no id: the current turn, with no messages.
	b.Session("null-current", "T", "ws", "RUNNING", time.Hour, "").Turn("t-null-current", 30*time.Minute, -1, "")
	// A message whose turn_id is '' names a turn whose id is '', not the
	// one without an id: it must not be read as the current turn's.
	b.DS.Messages = append(b.DS.Messages, kandevdb.Message{ID: "m-empty-turn", SessionID: "null-current", TaskID: "task-null-current",
		Author: "agent", Type: "tool_call", CreatedAt: b.Ago(time.Minute), UpdatedAt: b.Ago(time.Minute)})
	// The older of two open turns has no id: the newer is current.
	older := b.Session("null-older", "T", "ws", "WAITING_FOR_INPUT", time.Hour, "")
	older.Turn("t-null-older-1", 40*time.Minute, -1, "")
	ask(older.Turn("t-null-older-2", 30*time.Minute, -1, ""), "null-older")
	// The current turn's question has no id: it is still asked.
	ask(b.Session("null-question", "T", "ws", "WAITING_FOR_INPUT", time.Hour, "").Turn("t-null-question", 30*time.Minute, -1, ""), "null-question")
	ask(b.Session("control", "T", "ws", "WAITING_FOR_INPUT", time.Hour, "").Turn("t-control", 30*time.Minute, -1, ""), "control")
	db := load(t, dialects[0], b.DS, kandevdb.Options{})
	for _, q := range []string{
		`UPDATE task_sessions SET id = NULL WHERE id = 'null-session'`,
		`UPDATE task_session_turns SET id = NULL WHERE id IN ('t-null-current', 't-null-older-1')`,
		`UPDATE task_session_messages SET id = NULL WHERE turn_id = 't-null-question'`,
	} {
		if _, err := db.(*kandevdb.SQLite).DB().ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	snap := snapshot(t, db.URL(), kandev.Options{})
	checkNullIDSessions(t, snap)
	want := []model.RowRef{
		{Table: "task_sessions", Of: "NULL id, task task-null-session"},
		{Table: "task_session_turns", Of: "NULL id, session null-current"},
		{Table: "task_session_turns", Of: "NULL id, session null-older"},
		{Table: "task_session_messages", Of: "NULL id, turn t-null-question"},
	}
	got := slices.Clone(snap.Malformed)
	slices.SortFunc(got, func(a, b model.RowRef) int { return slices.Index(want, a) - slices.Index(want, b) })
	if !slices.Equal(got, want) {
		t.Errorf("rows kandev cannot read %v, want %v", snap.Malformed, want)
	}
	found := map[string]scan.Finding{}
	for _, f := range scan.Findings(snap, scan.Options{Thresholds: scan.DefaultThresholds()}, now).Findings {
		found[f.SessionID+" "+string(f.Kind)] = f
	}
	for _, id := range []string{"null-older", "null-question", "control"} {
		if _, ok := found[id+" "+string(model.KindUnansweredClarification)]; !ok {
			t.Errorf("%s: the pending question was not found", id)
		}
	}
	if f, ok := found["null-current "+string(model.KindNeverStarted)]; !ok || f.TurnID != nil {
		t.Errorf("null-current: never_started %v (turn %v), want one naming no turn", ok, f.TurnID)
	}
}

// checkNullIDSessions checks the sessions TestNullIDsNeverBlindTheScan read.
func checkNullIDSessions(t *testing.T, snap *model.Snapshot) {
	t.Helper()
	var ids []string
	for _, s := range snap.Sessions {
		ids = append(ids, s.ID)
		if want := s.ID != "control"; s.MalformedMetadata != want {
			t.Errorf("%s: marked as holding a row kandev cannot read: %v, want %v", s.ID, s.MalformedMetadata, want)
		}
		switch c := s.Current; s.ID {
		case "null-current":
			if c == nil || !c.NullID || c.ID != "" || !c.Open || len(s.Messages) != 0 {
				t.Errorf("null-current: current turn %+v with %d messages, want the open one with a NULL id and none", c, len(s.Messages))
			}
		case "null-older":
			if c == nil || c.ID != "t-null-older-2" || s.OpenTurns != 2 {
				t.Errorf("null-older: current turn %+v of %d open, want t-null-older-2 of 2", c, s.OpenTurns)
			}
		}
	}
	if !slices.Equal(ids, []string{"control", "null-current", "null-older", "null-question"}) {
		t.Errorf("sessions %v, want all but the one with a NULL id", ids)
	}
}
