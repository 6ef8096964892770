package config

import (
	"fmt"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// CancelSettle is how long a cancel_and_nudge waits, once kandev took the
// cancel, for the session to leave RUNNING before it nudges: kandev ends
// the turn only once its agent acknowledged the cancel.
const CancelSettle = 30 * time.Second

// attempt is how long the longest attempt of one action may take, and
// what makes it up, for a person reading check-config.
type attempt struct {
	d time.Duration
	// field names a single request's timeout (slack.timeout); why, when
	// set instead, says what an attempt of several parts is made of.
	field, why string
}

// longestAttempt is the longest attempt one of the config's enabled steps
// or buttons can take: a claim must outlive it, so that no attempt is cut
// short by its own claim, and a crashed holder's request has landed or
// died before another process takes the action over. An outlet's attempt
// is its request: a Slack post, an alert, a webhook, a nudge or an answer
// to kandev (a read of kandev before it sends nothing; cut short, it is
// read again). A cancel_and_nudge is one read of kandev, agent.cancel,
// up to CancelSettle for kandev to settle it (its reads cut at that end),
// and message.add: cut short between the cancel and the nudge, the next
// attempt would have to guess whether to cancel again.
func longestAttempt(c *Config) attempt {
	var long attempt
	take := func(a attempt) {
		if a.d > long.d {
			long = a
		}
	}
	if c.Slack != nil {
		take(attempt{d: c.Slack.Timeout, field: "slack.timeout"})
	}
	if a := c.Alertmanager; a != nil {
		take(attempt{d: a.Timeout, field: "alertmanager.timeout"})
	}
	for i, w := range c.Webhooks {
		take(attempt{d: w.Timeout, field: fmt.Sprintf("webhooks[%d].timeout", i)})
	}
	k, s := c.Kandev.Timeout, c.Database.ScanTimeout
	cancel := func(by string) attempt {
		return attempt{d: max(s+k+CancelSettle+k, 2*s+k), why: fmt.Sprintf("%s: database.scan_timeout %s for the read, kandev.timeout %s for agent.cancel, %s for kandev to settle it, kandev.timeout %s for message.add",
			by, dur(s), dur(k), dur(CancelSettle), dur(k))}
	}
	buttons := c.Slack != nil && c.Slack.Interactivity != nil
	for _, kind := range model.Kinds {
		p := c.Policy[kind]
		if p == nil {
			continue
		}
		for i, st := range p.Steps {
			switch st.Action {
			case model.ActionNudge:
				take(attempt{d: k, field: "kandev.timeout"})
			case model.ActionCancelAndNudge:
				take(cancel(fmt.Sprintf("policy.%s.steps[%d]'s cancel_and_nudge", kind, i)))
			case model.ActionSlack:
				if !buttons {
					continue
				}
				take(attempt{d: k, field: "kandev.timeout"}) // an answer, a permission, a message
				if model.Cancellable(kind) {
					take(cancel(fmt.Sprintf("the \"Cancel turn and nudge\" button on %s's Slack messages", kind)))
				}
			}
		}
	}
	return long
}

// claimTTL checks that state.claim_ttl outlives the longest attempt.
func (v validator) claimTTL(c *Config) {
	long := longestAttempt(c)
	if long.d == 0 || c.State.ClaimTTL >= long.d+time.Second {
		return
	}
	if long.field != "" {
		v.add("state.claim_ttl", "%s must be at least %s + 1s (%s), so a crashed holder's request has landed or died before a takeover",
			dur(c.State.ClaimTTL), long.field, dur(long.d+time.Second))
		return
	}
	v.add("state.claim_ttl", "%s must be at least %s, the longest attempt an enabled step or button can take (%s) + 1s, so that no attempt is cut short by its own claim",
		dur(c.State.ClaimTTL), dur(long.d+time.Second), long.why)
}
