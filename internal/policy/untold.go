package policy

import (
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// RetryFailed is `watchdogd episodes retry`: after an operator fixed what
// made actions fail for good (a revoked token, a wrong channel, a missing
// scope), it queues again, due now, the newest failed action of each open
// episode nobody was told of (see Untold). The ledger marks each queued
// action uncertain, so a Slack post is looked for in the channel before it
// is sent again (an earlier attempt may have landed before a later one
// failed) and kandev deduplicates a nudge by its key: nothing goes out
// twice. Only the newest is queued because only the newest due step ever
// goes out. With id, only that episode; ok is false when it is not open.
func RetryFailed(st model.Ledger, id string, now time.Time) (p model.Plan, ok bool) {
	p.Now, ok = now, id == ""
	for _, e := range st.Open {
		if id != "" && e.ID != id {
			continue
		}
		ok = true
		if a, untold := untold(e); untold {
			p.Requeue = append(p.Requeue, a.Key)
		}
	}
	return p, ok
}

// Untold counts, by kind, the open episodes nobody was told of: an action
// of theirs failed for good, and none is delivered, pending or in flight
// (log actions aside).
// They stay so until a next step goes out or an operator retries them, so
// the count is what an alert watches (a page must never be lost quietly).
func Untold(st model.Ledger) map[model.Kind]int {
	out := map[model.Kind]int{}
	for _, e := range st.Open {
		if _, ok := untold(e); ok {
			out[e.Kind]++
		}
	}
	return out
}

// untold returns the newest failed action of an episode nobody was told of.
func untold(e model.Episode) (model.Action, bool) {
	var newest *model.Action
	for i, a := range e.Actions {
		if a.Kind == model.ActionLog {
			continue // a log line tells nobody
		}
		switch a.State {
		case model.StateDelivered, model.StatePending, model.StateClaimed:
			return model.Action{}, false
		case model.StateFailed:
			if newest == nil || a.CreatedAt.After(newest.CreatedAt) || a.CreatedAt.Equal(newest.CreatedAt) && a.Key > newest.Key {
				newest = &e.Actions[i]
			}
		}
	}
	if newest == nil {
		return model.Action{}, false
	}
	return *newest, true
}
