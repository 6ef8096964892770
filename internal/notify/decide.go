package notify

import (
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/term"
)

// Holding is what decides whether a paced action waits this cycle.
type Holding struct {
	Episode  model.Episode
	Silences []policy.Silence
	Quiet    *model.QuietHours
	// Gate is until when the action's channel is closed (a Retry-After),
	// and GateErr why it could not be read.
	Gate    time.Time
	GateErr error
	// Sent is how many actions went to the channel this cycle; Budget is
	// how many may (0: no bound).
	Sent, Budget int
	Now          time.Time
}

// Held says whether a paced action waits this cycle, and why: a silence
// or quiet hours (it stays pending; nothing is dropped), the channel's
// Retry-After, or the cycle's budget for the channel, spent. overBudget
// says it is the budget, which the outlet's rate-limit metric counts.
func Held(h Holding) (held bool, why string, overBudget bool) {
	if deferred, why := policy.Deferred(h.Episode, h.Silences, h.Quiet, h.Now); deferred {
		return true, why, false
	}
	switch {
	case h.GateErr != nil:
		return true, "channel gate unreadable", false
	case h.Now.Before(h.Gate):
		return true, "the channel asked to wait (Retry-After)", false
	case h.Budget > 0 && h.Sent >= h.Budget:
		return true, "per-cycle budget spent", true
	}
	return false, "", false
}

// Settle says how a claimed attempt settles from how it went: as its outlet
// decided; or, from an error's verdict, failed for good, back untried
// (nothing left), or due again after the service's wait or a backoff —
// keeping, and adding to, what says an earlier attempt may have landed.
func Settle(a model.Action, s Sent, now time.Time) model.Outcome {
	if s.Outcome != nil {
		return *s.Outcome
	}
	v, msg := s.Verdict, term.OneLine(s.Err)
	a.Uncertain = a.Uncertain || s.MayHaveLanded
	switch {
	case !v.Retry:
		return model.Outcome{State: model.StateFailed, Error: msg}
	case v.NotSent: // the cycle's time ran out before the request: next cycle
		return released(a, now, msg)
	}
	wait := Backoff(a.Attempts)
	if v.After > 0 {
		wait = v.After // the service said exactly how long (Retry-After)
	}
	return model.Outcome{State: model.StatePending, NextAttempt: now.Add(wait), Error: msg, Uncertain: v.Uncertain || a.Uncertain}
}

// Result is what an outcome counts as in logs and metrics.
func Result(o model.Outcome) model.Result {
	switch {
	case o.State != model.StatePending:
		return model.Result(o.State) // delivered, failed, superseded
	case o.Refund: // given back untried: it waits, as a held action does
		return model.ResultDeferred
	}
	return model.ResultRetried
}
