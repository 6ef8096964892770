package notify

import (
	"cmp"
	"slices"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// Lane is one destination of one outlet (a Slack channel, a webhook, an
// Alertmanager member, kandev): its actions go out one after another, and
// no lane waits on another. See docs/architecture.md, "Delivery".
type Lane struct {
	// Outlet is the entry's Name ("slack", "webhook", "alertmanager",
	// "kandev", "log", "ledger"): the lanes of one outlet share its workers.
	Outlet string
	// Destination names the destination within its outlet: a channel id,
	// a webhook's name, a member's index, "kandev".
	Destination string
}

// LaneOf is the lane action a goes out in, as its entry says (To), or
// its channel. An action with no entry is a lane of its own kind: its
// attempt fails, saying nothing delivers it.
func LaneOf(reg Registry, a model.Action) Lane {
	e, ok := reg[a.Kind]
	if !ok {
		return Lane{Outlet: string(a.Kind), Destination: a.Channel}
	}
	name := e.Name
	if name == "" {
		name = string(a.Kind)
	}
	if e.To != nil {
		return Lane{Outlet: name, Destination: e.To(a)}
	}
	return Lane{Outlet: name, Destination: a.Channel}
}

// LaneQueue is a lane's due actions in the order it tries them.
type LaneQueue struct {
	Lane Lane
	Due  []model.Due
}

// Queues splits due actions, listed oldest first, into their lanes: the
// lanes in the order of their oldest action, and within a lane first
// attempts before retries, each oldest first, so that a destination's
// new findings never wait behind the retries of old ones.
func Queues(due []model.Due, reg Registry) []LaneQueue {
	index := map[Lane]int{}
	var out []LaneQueue
	for _, d := range due {
		l := LaneOf(reg, d.Action)
		i, ok := index[l]
		if !ok {
			i = len(out)
			index[l] = i
			out = append(out, LaneQueue{Lane: l})
		}
		out[i].Due = append(out[i].Due, d)
	}
	for _, q := range out {
		slices.SortStableFunc(q.Due, func(a, b model.Due) int { return cmp.Compare(retry(a.Action), retry(b.Action)) })
	}
	return out
}

// retry is 1 for an action tried before (or that may have landed), 0 for
// a first attempt.
func retry(a model.Action) int {
	if a.Attempts > 0 || a.Uncertain {
		return 1
	}
	return 0
}

// Reach is what an attempt says of its destination, for the lane's
// breaker.
type Reach int

const (
	// Unheard: nothing was asked of the destination (the action was
	// held, superseded, fenced, or the cycle's time ran out).
	Unheard Reach = iota
	// Answered: the destination answered, whatever it said.
	Answered
	// Unreachable: it did not answer in time, or could not be connected
	// to (Verdict.Unreachable).
	Unreachable
	// GoneForGood: it said it is gone (Verdict.Gone: a webhook's 410).
	GoneForGood
)

// Transition is how an attempt changed its lane's breaker.
type Transition string

const (
	NoChange  Transition = ""
	LaneDown  Transition = "down"       // held for its backoff
	StillDown Transition = "still_down" // a probe failed: held again, longer
	LaneUp    Transition = "up"         // delivers again
	LaneGone  Transition = "gone"       // closed until released
)

// Breaker is a lane's breaker after an attempt that reached it as reach,
// from its hold h (zero: none): pure, so that a cycle, a click and another
// replica decide alike. A zero next means no hold (LaneUp removes it).
// A destination gone for good stays so whatever an attempt says: only
// its URL changing or an operator reopens it.
func Breaker(h model.Hold, reach Reach, why string, now time.Time) (model.Hold, Transition) {
	held := !h.Since.IsZero()
	switch {
	case held && h.Gone(), reach == Unheard:
		return h, NoChange
	case reach == GoneForGood:
		since := now
		if held {
			since = h.Since
		}
		return model.Hold{Outlet: h.Outlet, Destination: h.Destination, Reason: why, Since: since}, LaneGone
	case reach == Answered && held:
		return model.Hold{}, LaneUp
	case reach == Answered:
		return h, NoChange
	case held: // unreachable again: a probe failed
		n := h.Failures + 1
		return model.Hold{Outlet: h.Outlet, Destination: h.Destination, Reason: why, Since: h.Since, Until: now.Add(Backoff(n)), Failures: n}, StillDown
	}
	return model.Hold{Outlet: h.Outlet, Destination: h.Destination, Reason: why, Since: now, Until: now.Add(Backoff(1)), Failures: 1}, LaneDown
}

// Gate is what a lane's breaker lets through now.
type Gate int

const (
	// Open: deliver (a destination gone for good is open here: each of
	// its actions fails unsent, saying so).
	Open Gate = iota
	// Shut: the breaker holds; every action waits, untried and uncounted
	// as a failure.
	Shut
	// Probe: the backoff ended; one attempt tells whether it answers.
	Probe
)

// GateOf is what a lane's hold h (zero: none) lets through at now.
func GateOf(h model.Hold, now time.Time) Gate {
	switch {
	case h.Since.IsZero() || h.Gone():
		return Open
	case now.Before(h.Until):
		return Shut
	}
	return Probe
}

// ReachOf is what a send's answer says of its destination. An error the
// attempt's own context raised (the cycle's time ran out) says nothing
// of it.
func ReachOf(s Sent, ctxErr error) Reach {
	switch {
	case s.Outcome != nil:
		if s.Outcome.State == model.StateDelivered {
			return Answered
		}
		return Unheard // the outlet decided without asking (a wait, a refusal of its own)
	case s.Verdict.Gone:
		return GoneForGood
	case s.Verdict.NotSent, ctxErr != nil:
		return Unheard
	case s.Verdict.Unreachable:
		return Unreachable
	}
	return Answered
}
