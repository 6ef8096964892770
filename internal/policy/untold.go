package policy

import (
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// RetryFailed is `watchdogd episodes retry`: after an operator fixed what
// made actions fail for good (a revoked token, a wrong channel, a missing
// scope), it queues again, due now, the newest failed step to each
// destination of each open episode that nobody there was told of (see
// Untold). The ledger marks each queued action uncertain, so a Slack post
// is looked for in the channel before it is sent again (an earlier attempt
// may have landed before a later one failed) and kandev deduplicates a
// nudge by its key: nothing goes out twice. Only the newest per
// destination is queued because only the newest due step to a destination
// ever goes out. With id, only that episode; ok is false when it is not
// open.
func RetryFailed(st model.Ledger, id string, now time.Time) (p model.Plan, ok bool) {
	p.Now, ok = now, id == ""
	for _, e := range st.Open {
		if id != "" && e.ID != id {
			continue
		}
		ok = true
		p.Requeue = append(p.Requeue, untold(e)...)
	}
	return p, ok
}

// Untold counts, by kind, the open episodes with a destination nobody was
// told at: a step to it failed for good, and none to it is delivered,
// pending or in flight. Each destination counts on its own: an alert
// delivered to Alertmanager tells nobody in the Slack channel whose post
// failed. They stay so until a next step to it goes out or an operator
// retries them, so the count is what an alert watches (a page must never
// be lost quietly).
func Untold(st model.Ledger) map[model.Kind]int {
	out := map[model.Kind]int{}
	for _, e := range st.Open {
		if len(untold(e)) > 0 {
			out[e.Kind]++
		}
	}
	return out
}

// untold are the keys of the newest failed step to each destination of e
// that nobody was told at, oldest destination first. Only ladder steps
// tell (tellsAt): a log line tells nobody, and the edits, clicks and
// replies on a posted message are not steps, never queued again (a click
// answered again could answer what someone else answered since).
func untold(e model.Episode) []string {
	newest := map[string]int{}
	told := map[string]bool{}
	var order []string
	for i, a := range e.Actions {
		d, ok := tellsAt(a)
		if !ok {
			continue
		}
		switch a.State {
		case model.StateDelivered, model.StatePending, model.StateClaimed:
			told[d] = true
		case model.StateFailed:
			j, seen := newest[d]
			if !seen {
				order = append(order, d)
			}
			if !seen || a.CreatedAt.After(e.Actions[j].CreatedAt) || a.CreatedAt.Equal(e.Actions[j].CreatedAt) && a.Key > e.Actions[j].Key {
				newest[d] = i
			}
		}
	}
	var keys []string
	for _, d := range order {
		if !told[d] {
			keys = append(keys, e.Actions[newest[d]].Key)
		}
	}
	return keys
}

// tellsAt is the destination a ladder step a tells someone at; ok is false
// for what is not such a step (a log line, an edit, a click, a reply).
func tellsAt(a model.Action) (string, bool) {
	switch a.Kind {
	case model.ActionSlack, model.ActionWebhook, model.ActionAlertmanager, model.ActionNudge, model.ActionCancelAndNudge:
		return destinationOf(a), true
	}
	return "", false
}
