package scan

import (
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// interruptedFindings adds a session left parked by work kandev dropped.
// s's current turn is the one the findings judge (Judged).
//
// A session whose judged turn was abandoned (a kandev restart: see
// abandoned) and on which the agent has not replied since is parked,
// whatever became of a permission on that turn afterwards (kandev still
// shows one that was pending, and marks it expired when a grant fails on
// permission_not_found). Only a new turn (the judged turn is then another),
// a reply, or the session ending or its task archived (it leaves the
// snapshot) ends that. Input queued for it does not: kandev takes queued
// input at a turn's end, and no turn runs to end. A question still pending on the turn is reported
// as the question instead: kandev marks a detached question answerable,
// and answering it resumes the session. Once a person answered it, the
// wait counts from the answer, since kandev resumes the agent in a new
// turn about 3 s later.
//
// Since is the restart instant (RestartAt). The finding names the turn
// (Detail.AbandonedTurnID), for how it cleared to be told.
//
// Without an abandoned turn, a session kandev parked (the task's
// interrupted_at, this its session, nothing queued or pending, no open
// turn, WAITING_FOR_INPUT) is reported from interrupted_at.
func interruptedFindings(s model.Session, f facts, interruptTarget bool, th Thresholds, now time.Time, add adder) {
	cur := s.Current
	if f.anyPending || cur != nil && cur.Open {
		return
	}
	var parkedAt time.Time
	if at, ok := interruptedAt(s); ok && interruptTarget {
		parkedAt = at
	}
	if abandoned(cur, s.Messages, parkedAt, th.StallAfter) {
		abandonedFinding(s, f, parkedAt, th, now, add)
		return
	}
	if s.Queued > 0 || s.State != "WAITING_FOR_INPUT" || parkedAt.IsZero() || now.Sub(parkedAt) < th.InterruptedAfter {
		return
	}
	d := &Detail{Interruption: InterruptionRestart}
	if cur != nil && !cur.NullID {
		d.AbandonedTurnID = cur.ID
	}
	add(model.KindInterruptedSession, parkedAt, nil, nil, d)
}

// abandonedFinding adds the finding of a session whose judged turn was
// abandoned, unless the agent replied since; parkedAt is the task's
// interrupted_at when kandev set it for this session, else zero.
func abandonedFinding(s model.Session, f facts, parkedAt time.Time, th Thresholds, now time.Time, add adder) {
	cur := s.Current
	since := RestartAt(cur, parkedAt)
	if replied(cur, s.Messages, since) {
		return
	}
	d := &Detail{AbandonedTurnID: cur.ID, RestartAt: rfc(since)}
	if cur.NullID {
		d.AbandonedTurnID = ""
	}
	if at := answeredAt(s.Messages); at.After(since) {
		since, d.AnsweredAt = at, rfc(at)
	}
	if p := lostPermission(f, s.Messages); p != nil {
		d.LostPermission = p
	}
	switch {
	case !parkedAt.IsZero():
		d.Interruption = InterruptionRestart
	case f.unanswered():
		d.Interruption = InterruptionDroppedPrompt
	case d.LostPermission != nil:
		d.Interruption = InterruptionLostPermission
	default:
		d.Interruption = InterruptionAbandoned
	}
	if now.Sub(since) >= th.InterruptedAfter {
		add(model.KindInterruptedSession, since, nil, nil, d)
	}
}

// lostPermission is the turn's newest permission request when the restart
// lost it: still marked pending (kandev shows it, but it can no longer be
// granted), or marked expired (a grant failed on permission_not_found).
func lostPermission(f facts, msgs []model.Message) *LostPermission {
	if p := f.lostPermission; p != nil {
		return &LostPermission{PendingID: p.pendingID, Permission: p.text}
	}
	var newest *model.Message
	for i := range msgs {
		if !msgs[i].Aggregate() && msgs[i].Type == "permission_request" && (newest == nil || newer(msgs[i], *newest)) {
			newest = &msgs[i]
		}
	}
	if newest == nil {
		return nil
	}
	if st, _ := newest.Meta.String("status"); st == "expired" {
		p := permissionOf(*newest)
		return &LostPermission{PendingID: p.pendingID, Permission: p.text, Status: st}
	}
	return nil
}
