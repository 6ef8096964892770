package policy

import (
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// RetryFailed is `watchdogd episodes retry`: after an operator fixed what
// made actions fail for good (a revoked token, a wrong channel, a missing
// scope), it queues again, due now, the newest failed action to each
// destination of each open episode nobody was told of (see Untold). The
// ledger marks each queued action uncertain, so a Slack post is looked for
// in the channel before it is sent again (an earlier attempt may have
// landed before a later one failed) and kandev deduplicates a nudge by its
// key: nothing goes out twice. Only the newest per destination is queued
// because only the newest due step to a destination ever goes out. With
// id, only that episode; ok is false when it is not open.
func RetryFailed(st model.Ledger, id string, now time.Time) (p model.Plan, ok bool) {
	p.Now, ok = now, id == ""
	for _, e := range st.Open {
		if id != "" && e.ID != id {
			continue
		}
		ok = true
		if _, untold := untold(e); untold {
			p.Requeue = append(p.Requeue, newestFailed(e)...)
		}
	}
	return p, ok
}

// newestFailed are the keys of the newest failed action to each
// destination that tells someone, oldest first.
func newestFailed(e model.Episode) []string {
	newest := map[string]int{}
	var order []string
	for i, a := range e.Actions {
		if a.Kind == model.ActionLog || a.State != model.StateFailed {
			continue
		}
		d := destinationOf(a)
		j, seen := newest[d]
		if !seen {
			order = append(order, d)
		}
		if !seen || a.CreatedAt.After(e.Actions[j].CreatedAt) || a.CreatedAt.Equal(e.Actions[j].CreatedAt) && a.Key > e.Actions[j].Key {
			newest[d] = i
		}
	}
	keys := make([]string, 0, len(order))
	for _, d := range order {
		keys = append(keys, e.Actions[newest[d]].Key)
	}
	return keys
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
