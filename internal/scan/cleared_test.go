package scan

import (
	"slices"
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
		// The turn moved on and its row was not read: only that is known.
		{"new turn", &open, model.KindStalledTurn, "turn-0", "", "the turn moved on"},
		{"output", &open, model.KindNeverStarted, "turn-1", "", "the agent produced output"},
		{"launch hang over", &open, model.KindNeverStarted, "", "", "a turn started"},
		{"resumed", &open, model.KindInterruptedSession, "", "", "the session resumed"},
		{"one open turn", &open, model.KindMultipleOpenTurns, "", "", "one turn is open again"},
	}
	for _, c := range cases {
		got := Cleared(Clearing{Session: c.s, Kind: c.kind, TurnID: c.turn, PendingID: c.pid})
		if got.Words() != c.want {
			t.Errorf("%s: %q, want %q", c.name, got.Words(), c.want)
		}
		clearsAs(t, c.name, c.kind, got)
	}
}

func ptrTo(s model.Session) *model.Session { return &s }

// clearsAs fails when a reason Cleared returned is not a code the
// metric's labels were made for (model.ClearedBy of its kind).
func clearsAs(t *testing.T, name string, kind model.Kind, got model.Cleared) {
	t.Helper()
	if !got.Known() || !slices.Contains(model.ClearedBy(kind), got) {
		t.Errorf("%s: %s clears with %q, which model.ClearedBy(%s) does not list", name, kind, got, kind)
	}
}

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
		cl := Clearing{Session: &moved, Kind: c.kind, TurnID: "turn-0", PendingID: "p1"}
		if c.turn != nil {
			cl.Turn = &model.TurnTrace{Turn: model.Turn{ID: "turn-0", StartedAt: ago(40 * m), CompletedAt: ago(30 * m)}, Messages: c.turn}
		}
		got := Cleared(cl)
		if got.Words() != c.want {
			t.Errorf("%s: %q, want %q", c.name, got.Words(), c.want)
		}
		clearsAs(t, c.name, c.kind, got)
	}
}

// TestClearedAfterARestart: a turn a restart abandoned clears as
// abandoned, never as completed; a session it left parked says whether a
// new turn started or the agent replied; a session that left the active
// ones says whether it ended or its task was archived. Modeled on kandev's
// rows: a restart closes the running turn at its start and writes its
// updated_at.
func TestClearedAfterARestart(t *testing.T) {
	m := time.Minute
	closedAtStart := func(s *model.Session) {
		s.Current.Open, s.Current.CompletedAt, s.Current.UpdatedAt = false, s.Current.StartedAt, ago(12*m)
	}
	parked := func() model.Session {
		return with(session("WAITING_FOR_INPUT", 30*m, userMessage(30*m), aggregate(25*m)), closedAtStart)
	}
	abandonedNow := parked()
	finished := with(session("WAITING_FOR_INPUT", 30*m, userMessage(30*m), aggregate(21*m)), closedAgo(20*m))
	cancelledTurn := with(session("WAITING_FOR_INPUT", 30*m, userMessage(30*m), agent("status", 20*m, `{"cancelled": true}`)), closedAgo(20*m))
	// A resume wrote a boot turn after the abandoned one.
	booted := with(parked(), resumed(5*m))
	next := with(session("RUNNING", 2*m), func(s *model.Session) { s.Current.ID = "turn-2" }) // a turn after the episode's
	restartDetail := &Detail{Interruption: InterruptionAbandoned, AbandonedTurnID: "turn-1", RestartAt: ptr("2026-11-29T11:48:00Z")}
	repliedSince := with(parked(), func(s *model.Session) { s.Current.RepliedAt = ago(m) })
	queued := with(parked(), func(s *model.Session) { s.Queued = 1 })
	// On SQLite a restart while a follow-up prompt runs closes its turn
	// at the real close, no interrupted_at, no row: quiet since the
	// agent's last activity.
	quiet := with(session("WAITING_FOR_INPUT", 40*m, userMessage(40*m), agent("tool_call", 20*m, `{}`)), func(s *model.Session) {
		s.Current.Open, s.Current.CompletedAt, s.Current.UpdatedAt = false, ago(12*m), ago(12*m)
	})
	trace := func(s model.Session) *model.TurnTrace {
		tr := &model.TurnTrace{Turn: *s.Current, Messages: s.Messages}
		tr.Turn.ID = "turn-0"
		return tr
	}
	cases := []struct {
		name string
		c    Clearing
		want model.Cleared
	}{
		// The stall's (or never-started) turn closed at its start by a
		// restart: abandoned, on the turn itself, under a boot turn, or
		// read after the session moved on.
		{"stall abandoned", Clearing{Kind: model.KindStalledTurn, TurnID: "turn-1", Session: &abandonedNow}, model.ClearedTurnAbandoned},
		{"never started abandoned under a boot turn", Clearing{Kind: model.KindNeverStarted, TurnID: "turn-1", Session: &booted}, model.ClearedTurnAbandoned},
		{"stall closed quiet by a restart", Clearing{Kind: model.KindStalledTurn, TurnID: "turn-1", Session: &quiet, StallAfter: 15 * m}, model.ClearedTurnAbandoned},
		{"abandoned, read after a new turn", Clearing{Kind: model.KindStalledTurn, TurnID: "turn-0", Session: &next, Turn: trace(abandonedNow)}, model.ClearedTurnAbandoned},
		// The agent finished: completed.
		{"completed", Clearing{Kind: model.KindStalledTurn, TurnID: "turn-1", Session: &finished}, model.ClearedTurnCompleted},
		{"completed, read after a new turn", Clearing{Kind: model.KindStalledTurn, TurnID: "turn-0", Session: &next, Turn: trace(finished)}, model.ClearedTurnCompleted},
		// A person cancelled it (watchdogd's cancel_and_nudge too).
		{"cancelled", Clearing{Kind: model.KindStalledTurn, TurnID: "turn-1", Session: &cancelledTurn}, model.ClearedCancelled},
		// A session a restart left parked.
		{"parked: a new turn", Clearing{Kind: model.KindInterruptedSession, Detail: restartDetail, Session: &next}, model.ClearedNewTurn},
		{"parked: the agent replied", Clearing{Kind: model.KindInterruptedSession, Detail: restartDetail, Session: &repliedSince}, model.ClearedAgentReplied},
		{"parked: a message queued", Clearing{Kind: model.KindInterruptedSession, Detail: restartDetail, Session: &queued}, model.ClearedQueued},
		{"parked: no longer", Clearing{Kind: model.KindInterruptedSession, Detail: restartDetail, Session: &abandonedNow}, model.ClearedUnparked},
		// A boot turn is no new turn.
		{"parked: only a boot turn since", Clearing{Kind: model.KindInterruptedSession, Detail: restartDetail, Session: &booted}, model.ClearedUnparked},
		{"parked, stored without its turn", Clearing{Kind: model.KindInterruptedSession, Session: &next}, model.ClearedResumed},
		// The session left the active ones.
		{"task archived", Clearing{Kind: model.KindInterruptedSession, Gone: &model.SessionTrace{Found: true, State: "WAITING_FOR_INPUT", TaskArchived: true}}, model.ClearedTaskArchived},
		{"session ended", Clearing{Kind: model.KindStalledTurn, Gone: &model.SessionTrace{Found: true, State: "COMPLETED"}}, model.ClearedSessionEnded},
		{"session gone", Clearing{Kind: model.KindStalledTurn, Gone: &model.SessionTrace{}}, model.ClearedSessionGone},
		{"session not read", Clearing{Kind: model.KindStalledTurn}, model.ClearedSessionEnded},
	}
	for _, c := range cases {
		got := Cleared(c.c)
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		clearsAs(t, c.name, c.c.Kind, got)
	}
}
