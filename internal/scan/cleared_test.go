package scan

import (
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// TestCleared: why an episode cleared, from what the fresh snapshot shows.
func TestCleared(t *testing.T) {
	m := time.Minute
	open := session("WAITING_FOR_INPUT", 40*m)
	asked := func(status string) model.Session {
		return session("WAITING_FOR_INPUT", 40*m, clarification("p1", "q1", status, 30*m, ""), clarification("p1", "q2", status, 30*m, ""))
	}
	perm := func(status string) model.Session {
		return session("RUNNING", 40*m, permissionReq("perm-1", status, 20*m))
	}
	cases := []struct {
		name      string
		s         *model.Session
		kind      model.Kind
		turn, pid string
		want      string
	}{
		// The session left the active states, or the task was archived.
		{"session gone", nil, model.KindStalledTurn, "turn-1", "", "the session ended"},
		// What kandev wrote on a question's rows, on the same turn.
		{"answered", ptrTo(asked("answered")), model.KindUnansweredClarification, "turn-1", "p1", "answered"},
		{"rejected", ptrTo(asked("rejected")), model.KindUnansweredClarification, "turn-1", "p1", "rejected in kandev"},
		{"cancelled", ptrTo(asked("cancelled")), model.KindShadowedClarification, "turn-1", "p1", "cancelled in kandev"},
		{"expired", ptrTo(asked("expired")), model.KindUnansweredClarification, "turn-1", "p1", "expired in kandev (the agent stopped waiting)"},
		// One row settled is the bundle settled.
		{"one row answered", ptrTo(session("WAITING_FOR_INPUT", 40*m, clarification("p1", "q1", "pending", 30*m, ""),
			clarification("p1", "q2", "answered", 30*m, ""))), model.KindUnansweredClarification, "turn-1", "p1", "answered"},
		// The rows were deleted: the question vanished.
		{"question gone", &open, model.KindUnansweredClarification, "turn-1", "p1", "the question is gone from kandev"},
		// Another bundle's rows say nothing of this one.
		{"other bundle", ptrTo(asked("answered")), model.KindUnansweredClarification, "turn-1", "p2", "the question is gone from kandev"},
		// Still pending but no longer a finding (it became an autopilot
		// child's, say): not claimed to be answered.
		{"still pending", ptrTo(asked("pending")), model.KindUnansweredClarification, "turn-1", "p1", "no longer waiting for a person"},
		// A permission's outcomes.
		{"approved", ptrTo(perm("approved")), model.KindPendingPermission, "turn-1", "perm-1", "approved"},
		{"permission rejected", ptrTo(perm("rejected")), model.KindPendingPermission, "turn-1", "perm-1", "rejected in kandev"},
		{"permission gone", &open, model.KindPendingPermission, "turn-1", "perm-1", "the permission request is gone from kandev"},
		// A restart closed the turn under a pending permission.
		{"permission orphaned", ptrTo(with(perm("pending"), completed)), model.KindPendingPermission, "turn-1", "perm-1",
			"the turn closed (a kandev restart?): the permission can no longer be granted"},
		// The question's turn is no longer current: its rows are not read.
		{"turn moved on", ptrTo(asked("answered")), model.KindUnansweredClarification, "turn-0", "p1", "the turn moved on"},
		// Turn progress.
		{"turn completed", ptrTo(with(session("RUNNING", 40*m), completed)), model.KindStalledTurn, "turn-1", "", "the turn completed"},
		{"new turn", &open, model.KindStalledTurn, "turn-0", "", "the turn completed"},
		{"output", &open, model.KindNeverStarted, "turn-1", "", "the agent produced output"},
		{"launch hang over", &open, model.KindNeverStarted, "", "", "a turn started"},
		{"resumed", &open, model.KindInterruptedSession, "", "", "the session resumed"},
		{"one open turn", &open, model.KindMultipleOpenTurns, "", "", "one turn is open again"},
	}
	for _, c := range cases {
		if got := Cleared(c.s, nil, c.kind, c.turn, c.pid); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func ptrTo(s model.Session) *model.Session { return &s }

// TestClearedAfterTheTurnMovedOn: a question whose turn is no longer
// current (a detached question answered after a restart resumes the
// session in a new turn) says what kandev wrote on its rows there.
func TestClearedAfterTheTurnMovedOn(t *testing.T) {
	m := time.Minute
	moved := session("RUNNING", 5*m) // current turn-1; the episode's turn is turn-0
	rows := func(status string) []model.Message {
		return []model.Message{clarification("p1", "q1", status, 30*m, ""), clarification("p1", "q2", status, 30*m, "")}
	}
	cases := []struct {
		name string
		turn []model.Message
		kind model.Kind
		want string
	}{
		// Answered: the answer resumed the session.
		{"answered", rows("answered"), model.KindUnansweredClarification, "answered"},
		{"expired", rows("expired"), model.KindShadowedClarification, "expired in kandev (the agent stopped waiting)"},
		{"permission approved", []model.Message{permissionReq("p1", "approved", 20*m)}, model.KindPendingPermission, "approved"},
		// The turn was read and the rows are gone.
		{"gone", []model.Message{}, model.KindUnansweredClarification, "the question is gone from kandev"},
		// Still pending on the old turn: all that is known is the move.
		{"still pending", rows("pending"), model.KindUnansweredClarification, "the turn moved on"},
		{"permission still pending", []model.Message{permissionReq("p1", "pending", 20*m)}, model.KindPendingPermission, "the turn moved on"},
		// The old turn was not read.
		{"not read", nil, model.KindUnansweredClarification, "the turn moved on"},
	}
	for _, c := range cases {
		if got := Cleared(&moved, c.turn, c.kind, "turn-0", "p1"); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
