package scan

import (
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// Clearing is what Cleared reads of an episode that scans no longer
// report, and of kandev as a fresh read holds it.
type Clearing struct {
	Kind              model.Kind
	TurnID, PendingID string
	// Detail is the episode's last finding's (an interrupted session names
	// the turn a restart abandoned there); nil when none was stored.
	Detail *Detail
	// Session is the episode's session in the snapshot, nil when it is no
	// longer active; Gone is then what kandev holds of it (nil when it was
	// not read).
	Session *model.Session
	Gone    *model.SessionTrace
	// Turn is the episode's own turn, read when the snapshot holds it
	// neither as its session's current turn nor as the turn before a boot
	// turn (nil when it was not read).
	Turn *model.TurnTrace
	// StallAfter is thresholds.stall_after: a turn that closed that long
	// after its agent's last activity was abandoned (see abandoned).
	StallAfter time.Duration
}

// Cleared says, from a fresh snapshot, why an episode that scans no longer
// report cleared, as a code (its words are the code's): what kandev
// recorded.
//
// A question or permission says what kandev wrote on its rows (answered,
// rejected, cancelled, expired, approved), or that they are gone: kandev
// keeps a bundle's rows on the turn it was asked in, which an answer given
// after a restart moves on from. A turn that closed says whether it
// completed or was abandoned (abandoned: a restart, never "completed"). A
// session a restart left parked says whether a new turn started or the
// agent replied.
func Cleared(c Clearing) model.Cleared {
	s := c.Session
	if s == nil {
		return gone(c.Gone)
	}
	switch c.Kind {
	case model.KindUnansweredClarification, model.KindShadowedClarification, model.KindPendingPermission:
		return askClearing(c)
	case model.KindStalledTurn, model.KindNeverStarted:
		if c.TurnID == "" && s.Current != nil {
			return model.ClearedTurnStarted
		}
		t, msgs, ok := c.own()
		switch {
		case !ok:
			return model.ClearedTurnMovedOn
		case t.Open:
			return model.ClearedAgentOutput
		case cancelled(msgs):
			return model.ClearedCancelled
		case abandoned(t, msgs, parkedAt(*s), c.StallAfter):
			return model.ClearedTurnAbandoned
		}
		return model.ClearedTurnCompleted
	case model.KindInterruptedSession:
		return unparked(c)
	case model.KindMultipleOpenTurns:
		return model.ClearedOneOpenTurn
	}
	return model.ClearedOther
}

// gone says why a session left the snapshot.
func gone(g *model.SessionTrace) model.Cleared {
	switch {
	case g == nil:
		return model.ClearedSessionEnded
	case !g.Found:
		return model.ClearedSessionGone
	case g.TaskArchived:
		return model.ClearedTaskArchived
	}
	return model.ClearedSessionEnded
}

// own is the episode's turn and its messages: its session's current turn,
// the turn before a boot turn, or the one read for it.
func (c Clearing) own() (*model.Turn, []model.Message, bool) {
	s := c.Session
	switch {
	case s.Current != nil && s.Current.ID == c.TurnID:
		return s.Current, s.Messages, true
	case s.BeforeBoot != nil && s.BeforeBoot.ID == c.TurnID:
		return s.BeforeBoot, s.BeforeBootMessages, true
	case c.Turn != nil:
		return &c.Turn.Turn, c.Turn.Messages, true
	}
	return nil, nil, false
}

// askClearing reads a question's or permission's rows on its turn.
func askClearing(c Clearing) model.Cleared {
	t, msgs, ok := c.own()
	if !ok {
		return model.ClearedTurnMovedOn
	}
	current := t == c.Session.Current || t == c.Session.BeforeBoot
	if current {
		return askCleared(msgs, c.Kind, c.PendingID, t.Open)
	}
	if why := askCleared(msgs, c.Kind, c.PendingID, false); why != model.ClearedNoLongerWaiting && why != model.ClearedPermissionOrphaned {
		return why
	}
	return model.ClearedTurnMovedOn
}

// unparked says how a session a restart left parked came back: its newest
// turn that is no boot turn is another (a new turn), or the agent replied
// on the abandoned one.
func unparked(c Clearing) model.Cleared {
	d, s := c.Detail, c.Session
	if d == nil || d.AbandonedTurnID == "" {
		return model.ClearedResumed // a finding stored before the turn was named
	}
	t, msgs := Judged(*s)
	if t == nil || t.ID != d.AbandonedTurnID {
		return model.ClearedNewTurn
	}
	restart := RestartAt(t, parkedAt(*s))
	if at, err := time.Parse(time.RFC3339Nano, deref(d.RestartAt)); err == nil {
		restart = at
	}
	switch {
	case replied(t, msgs, restart):
		return model.ClearedAgentReplied
	case s.Queued > 0:
		return model.ClearedQueued
	}
	return model.ClearedUnparked
}

// cancelled says whether a person cancelled the turn in kandev (its "Turn
// cancelled by user" row; watchdogd's own cancel_and_nudge writes it too).
func cancelled(msgs []model.Message) bool {
	var f facts
	for _, m := range msgs {
		f.observe(m)
	}
	return f.cancelled
}

// parkedAt is the task's interrupted_at, zero when it is not set.
func parkedAt(s model.Session) time.Time {
	at, _ := interruptedAt(s)
	return at
}

// AskedOn says whether an episode of this kind is about a question or a
// permission asked on its turn, whose rows say how it cleared.
func AskedOn(kind model.Kind) bool {
	return kind == model.KindUnansweredClarification || kind == model.KindShadowedClarification || kind == model.KindPendingPermission
}

// askCleared reads what kandev recorded on a question's or permission's
// rows among a turn's messages; open says whether that turn is open.
func askCleared(msgs []model.Message, kind model.Kind, pendingID string, open bool) model.Cleared {
	typ, goneCode := "clarification_request", model.ClearedQuestionGone
	if kind == model.KindPendingPermission {
		typ, goneCode = "permission_request", model.ClearedPermissionGone
	}
	var statuses []string
	for _, m := range msgs {
		if m.Aggregate() || m.Type != typ || !hasPendingID(m, pendingID) {
			continue
		}
		st, _ := m.Meta.String("status")
		statuses = append(statuses, st)
	}
	if len(statuses) == 0 {
		return goneCode
	}
	// A bundle's rows are settled together; the first settled word in
	// this order says it, should they differ.
	for _, st := range []model.Cleared{model.ClearedAnswered, model.ClearedApproved, model.ClearedRejected, model.ClearedCancelled, model.ClearedExpired} {
		for _, got := range statuses {
			if got == string(st) {
				return st
			}
		}
	}
	if kind == model.KindPendingPermission && !open {
		return model.ClearedPermissionOrphaned
	}
	return model.ClearedNoLongerWaiting
}

// hasPendingID says whether row m belongs to the question or permission
// pendingID: its metadata pending_id, or for a permission without one its
// row id (as the finding names it).
func hasPendingID(m model.Message, pendingID string) bool {
	pid, ok := m.Meta.String("pending_id")
	if !ok || pid == "" {
		return m.Type == "permission_request" && m.ID == pendingID
	}
	return pid == pendingID
}
