package scan

import (
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// What a kandev restart leaves behind, as the findings read it (see
// docs/architecture.md, "Restarts"). kandev's current-turn rule (D1–D15,
// internal/authority) is not changed by any of it: a boot turn is
// recognised here, from its messages, and the findings judge around it.

// BootTurn says whether t is a boot turn: the synthetic turn kandev writes
// on every resume, closed, holding exactly one message, an agent
// script_execution with script_type agent_boot and is_resuming true.
// Released kandev does not mark it lifecycle_only, so the rule takes it as
// the session's current turn; the findings judge the newest turn that is
// not one (Judged).
func BootTurn(t *model.Turn, msgs []model.Message) bool {
	if t == nil || t.Open || t.MessageCount != 1 {
		return false
	}
	for _, m := range msgs {
		if m.Author == "agent" && m.Type == "script_execution" {
			v, _ := m.Meta.String("script_type")
			return v == "agent_boot" && m.Meta.Flag("is_resuming")
		}
	}
	return false
}

// Judged is the turn a session's findings judge, with its messages: the
// current turn, or, when that is a boot turn, the session's newest turn
// that is not one (model.Session.BeforeBoot, which the reader reads for
// such a session).
func Judged(s model.Session) (*model.Turn, []model.Message) {
	if s.BeforeBoot != nil && BootTurn(s.Current, s.Messages) {
		return s.BeforeBoot, s.BeforeBootMessages
	}
	return s.Current, s.Messages
}

// abandoned says whether turn t, holding msgs, was closed without the
// agent finishing it: closed at its start (a restart closes the running
// turn so), or at or before the task's interrupted_at (zero: not set, or
// not this session's), or with the user's last message unanswered, or with
// a permission the agent asked still pending (kandev closes such a turn
// only on a restart), or closed quiet (quietClose; stallAfter is
// thresholds.stall_after) — and not cancelled by a person (kandev's "Turn
// cancelled by user" row, which watchdogd's own cancel_and_nudge writes
// too), and not a boot turn.
func abandoned(t *model.Turn, msgs []model.Message, interruptedAt time.Time, stallAfter time.Duration) bool {
	if t == nil || t.Open || BootTurn(t, msgs) {
		return false
	}
	var f facts
	var perm *model.Message
	for i := range msgs {
		f.observe(msgs[i])
		if !msgs[i].Aggregate() && msgs[i].Type == "permission_request" && (perm == nil || newer(msgs[i], *perm)) {
			perm = &msgs[i]
		}
	}
	switch {
	case f.cancelled:
		return false
	case !t.StartedAt.IsZero() && t.CompletedAt.Equal(t.StartedAt):
		return true
	case !interruptedAt.IsZero() && !t.CompletedAt.IsZero() && !t.CompletedAt.After(interruptedAt):
		return true
	case f.unanswered():
		return true
	case quietClose(t, f, stallAfter):
		return true
	}
	return perm != nil && pendingStatus(*perm)
}

// QuietClose is how long after the agent's last activity a turn closes
// at most when the agent finished it, unless thresholds.stall_after is
// shorter. kandev writes an agent's streamed text when a tool call starts
// or the turn ends, so a turn the agent ended shows activity at its close,
// give or take the seconds the agent takes to end it. A turn a restart
// closed while its follow-up prompt ran (no interrupted_at, and on SQLite
// its completed_at the real close) shows the silence before the restart.
const QuietClose = 5 * time.Minute

// quietClose says whether closed turn t, whose rows show f, closed quiet:
// QuietClose or more (stallAfter if shorter and set) after the agent's
// last activity. A turn without agent activity is not (it is abandoned
// when it leaves the user's message unanswered), nor one with activity at
// an unknown time (that may be at the close), nor one whose last activity
// is a question or permission: the silence after it was a person's (a
// restart while a person owes the answer closes the turn at its start).
func quietClose(t *model.Turn, f facts, stallAfter time.Duration) bool {
	quiet := QuietClose
	if stallAfter > 0 && stallAfter < quiet {
		quiet = stallAfter
	}
	if f.agentAtUnknown || f.lastAgent.IsZero() || t.CompletedAt.IsZero() || asks(f.lastAgentType) {
		return false
	}
	return t.CompletedAt.Sub(f.lastAgent) >= quiet
}

// MayBeAbandoned says whether the turn s's findings judge may have been
// abandoned, taking the task's interrupted_at as this session's
// (stallAfter is thresholds.stall_after): the reader reads the newest
// reply (model.Turn.RepliedAt) of such turns only.
func MayBeAbandoned(s model.Session, stallAfter time.Duration) bool {
	t, msgs := Judged(s)
	at, _ := interruptedAt(s)
	return abandoned(t, msgs, at, stallAfter)
}

// RestartAt is the restart instant of an abandoned turn: its updated_at,
// which kandev writes when the restart closes it (its started_at and
// completed_at are the turn's start), falling back to its completed_at
// when updated_at is missing, before it, or was read as missing for lying
// beyond thresholds.future_tolerance (kandev's CURRENT_TIMESTAMP writes on
// a PostgreSQL role outside UTC). When that is no later than the turn's
// start (the close is missing too, or both stamps are the start: they say
// nothing of when the restart came), parkedAt (the task's interrupted_at,
// zero when not set) if it is later.
func RestartAt(t *model.Turn, parkedAt time.Time) time.Time {
	at := t.StartedAt
	switch {
	case !t.UpdatedAt.IsZero() && !t.UpdatedAt.Before(t.CompletedAt):
		at = t.UpdatedAt
	case !t.CompletedAt.IsZero():
		at = t.CompletedAt
	}
	if !at.After(t.StartedAt) && parkedAt.After(at) {
		at = parkedAt
	}
	return at
}

// replied says whether the agent replied on turn t after at: an agent row
// created after it that is neither a status row (kandev's own), a launch
// boot script, nor a question or permission. kandev's own writes after a
// restart — an expired mark on a failed grant, the tool calls it closed,
// its status rows — change no row's creation, so none is a reply.
//
// A restart instant no later than the turn's start (nothing said when the
// restart came) proves no reply: the turn's own rows come after its start.
func replied(t *model.Turn, msgs []model.Message, at time.Time) bool {
	if !at.After(t.StartedAt) {
		return false
	}
	if t.RepliedAt.After(at) {
		return true
	}
	for _, m := range msgs {
		if !m.Aggregate() && IsActivity(m) && !asks(m.Type) && m.CreatedAt.After(at) {
			return true
		}
	}
	return false
}

func asks(typ string) bool { return typ == "clarification_request" || typ == "permission_request" }

// answeredAt is when a person last answered a question on the turn (its
// rows marked answered, rejected or cancelled: each resumes the agent in a
// new turn, about 3 s later); zero when none was.
func answeredAt(msgs []model.Message) time.Time {
	var last time.Time
	for _, m := range msgs {
		if m.Type != "clarification_request" {
			continue
		}
		switch st, _ := m.Meta.String("status"); st {
		case "answered", "rejected", "cancelled":
			if m.UpdatedAt.After(last) {
				last = m.UpdatedAt
			}
		}
	}
	return last
}
