package scan

import (
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// Why an episode cleared, as the Slack edit, the log, the ledger, `watchdogd
// episodes show` and a webhook's resolution say it. Each is a value of its
// own, chosen in one place (Cleared), so that each can be told apart.
const (
	// The session left the snapshot.
	ClearedSessionEnded = "the session ended"
	ClearedTaskArchived = "the task was archived"
	ClearedSessionGone  = "the session is gone from kandev"
	// A turn's progress.
	ClearedTurnCompleted = "the turn completed"
	ClearedTurnAbandoned = "the turn was abandoned — a kandev restart?"
	ClearedAgentOutput   = "the agent produced output"
	ClearedTurnStarted   = "a turn started"
	ClearedTurnMovedOn   = "the turn moved on"
	ClearedOneOpenTurn   = "one turn is open again"
	// A session a restart left parked.
	ClearedNewTurn      = "a new turn started"
	ClearedAgentReplied = "the agent replied"
	ClearedQueued       = "a message was queued for it"
	ClearedUnparked     = "kandev no longer marks it interrupted"
	ClearedResumed      = "the session resumed"
	// What kandev wrote on a question's or a permission's rows.
	ClearedAnswered         = "answered"
	ClearedApproved         = "approved"
	ClearedRejected         = "rejected in kandev"
	ClearedCancelled        = "cancelled in kandev"
	ClearedExpired          = "expired in kandev (the agent stopped waiting)"
	ClearedQuestionGone     = "the question is gone from kandev"
	ClearedPermissionGone   = "the permission request is gone from kandev"
	ClearedNoLongerWaiting  = "no longer waiting for a person"
	ClearedPermissionOrphan = "the turn closed (a kandev restart?): the permission can no longer be granted"
	ClearedConditionUnknown = "the condition cleared"
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
// report cleared: what kandev recorded.
//
// A question or permission says what kandev wrote on its rows (answered,
// rejected, cancelled, expired, approved), or that they are gone: kandev
// keeps a bundle's rows on the turn it was asked in, which an answer given
// after a restart moves on from. A turn that closed says whether it
// completed or was abandoned (abandoned: a restart, never "completed"). A
// session a restart left parked says whether a new turn started or the
// agent replied.
func Cleared(c Clearing) string {
	s := c.Session
	if s == nil {
		return gone(c.Gone)
	}
	switch c.Kind {
	case model.KindUnansweredClarification, model.KindShadowedClarification, model.KindPendingPermission:
		return askClearing(c)
	case model.KindStalledTurn, model.KindNeverStarted:
		if c.TurnID == "" && s.Current != nil {
			return ClearedTurnStarted
		}
		t, msgs, ok := c.own()
		switch {
		case !ok:
			return ClearedTurnMovedOn
		case t.Open:
			return ClearedAgentOutput
		case cancelled(msgs):
			return ClearedCancelled
		case abandoned(t, msgs, parkedAt(*s), c.StallAfter):
			return ClearedTurnAbandoned
		}
		return ClearedTurnCompleted
	case model.KindInterruptedSession:
		return unparked(c)
	case model.KindMultipleOpenTurns:
		return ClearedOneOpenTurn
	}
	return ClearedConditionUnknown
}

// gone says why a session left the snapshot.
func gone(g *model.SessionTrace) string {
	switch {
	case g == nil:
		return ClearedSessionEnded
	case !g.Found:
		return ClearedSessionGone
	case g.TaskArchived:
		return ClearedTaskArchived
	}
	return ClearedSessionEnded
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
func askClearing(c Clearing) string {
	t, msgs, ok := c.own()
	if !ok {
		return ClearedTurnMovedOn
	}
	current := t == c.Session.Current || t == c.Session.BeforeBoot
	if current {
		return askCleared(msgs, c.Kind, c.PendingID, t.Open)
	}
	if why := askCleared(msgs, c.Kind, c.PendingID, false); why != ClearedNoLongerWaiting && why != ClearedPermissionOrphan {
		return why
	}
	return ClearedTurnMovedOn
}

// unparked says how a session a restart left parked came back: its newest
// turn that is no boot turn is another (a new turn), or the agent replied
// on the abandoned one.
func unparked(c Clearing) string {
	d, s := c.Detail, c.Session
	if d == nil || d.AbandonedTurnID == "" {
		return ClearedResumed // a finding stored before the turn was named
	}
	t, msgs := Judged(*s)
	if t == nil || t.ID != d.AbandonedTurnID {
		return ClearedNewTurn
	}
	restart := RestartAt(t, parkedAt(*s))
	if at, err := time.Parse(time.RFC3339Nano, deref(d.RestartAt)); err == nil {
		restart = at
	}
	switch {
	case replied(t, msgs, restart):
		return ClearedAgentReplied
	case s.Queued > 0:
		return ClearedQueued
	}
	return ClearedUnparked
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
func askCleared(msgs []model.Message, kind model.Kind, pendingID string, open bool) string {
	typ, goneWords := "clarification_request", ClearedQuestionGone
	if kind == model.KindPendingPermission {
		typ, goneWords = "permission_request", ClearedPermissionGone
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
		return goneWords
	}
	// A bundle's rows are settled together; the first settled word in
	// this order says it, should they differ.
	for _, st := range []string{"answered", "approved", "rejected", "cancelled", "expired"} {
		for _, got := range statuses {
			if got == st {
				return clearedWords[st]
			}
		}
	}
	if kind == model.KindPendingPermission && !open {
		return ClearedPermissionOrphan
	}
	return ClearedNoLongerWaiting
}

// clearedWords are kandev's statuses as the cleared line says them.
var clearedWords = map[string]string{
	"answered":  ClearedAnswered,
	"approved":  ClearedApproved,
	"rejected":  ClearedRejected,
	"cancelled": ClearedCancelled,
	"expired":   ClearedExpired,
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
