package policy

import (
	"time"

	"github.com/watchdogd/watchdogd/internal/ledger"
)

// RetryFailed is `watchdogd episodes retry`: after an operator fixed what
// made actions fail for good (a revoked token, a wrong channel, a missing
// scope), it queues again, due now, the newest failed action of each open
// episode that nothing has reached anyone for — none of its actions
// delivered, pending or in flight. The ledger marks each queued action
// uncertain, so a Slack post is looked for in the channel before it is
// sent again (an earlier attempt may have landed before a later one
// failed) and kandev deduplicates a nudge by its key: nothing goes out
// twice. Only the newest is queued because only the newest due step ever
// goes out. With id, only that episode; ok is false when it is not open.
func RetryFailed(st ledger.State, id string, now time.Time) (p ledger.Plan, ok bool) {
	p.Now = now
	for _, e := range st.Open {
		if id != "" && e.ID != id {
			continue
		}
		ok = true
		var newest *ledger.Action
		reached := false
		for i, a := range e.Actions {
			switch a.State {
			case ledger.StateDelivered, ledger.StatePending, ledger.StateClaimed:
				reached = true
			case ledger.StateFailed:
				if newest == nil || a.CreatedAt.After(newest.CreatedAt) || a.CreatedAt.Equal(newest.CreatedAt) && a.Key > newest.Key {
					newest = &e.Actions[i]
				}
			}
		}
		if newest != nil && !reached {
			p.Requeue = append(p.Requeue, newest.Key)
		}
	}
	return p, ok || id == ""
}
