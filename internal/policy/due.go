// Package policy decides what watchdogd does about its findings. Every
// decision here is a pure function of (ledger state, findings, config, now):
// which episodes open, refresh or resolve, which step of an escalation
// ladder is due, where a message goes, and whether a silence or quiet hours
// defer it. I/O stays with the callers (internal/cycle, the commands).
package policy

import (
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// Occurrence is one occurrence of a ladder step: step index and repeat
// number (0 for the step itself, n for the n-th repeat of the last step).
type Occurrence struct {
	Step   int
	Repeat int
	At     time.Time
}

// Due returns the newest step occurrence due at now for an episode that
// began at since. Only the newest is ever returned, so an outage, a silence
// or quiet hours never release a burst of missed steps or repeats.
func Due(since time.Time, p *model.Policy, now time.Time) (Occurrence, bool) {
	last := -1
	for i, s := range p.Steps {
		if !since.Add(s.After).After(now) {
			last = i
		}
	}
	if last < 0 {
		return Occurrence{}, false
	}
	occ := Occurrence{Step: last, At: since.Add(p.Steps[last].After)}
	if last == len(p.Steps)-1 && p.RepeatEvery > 0 {
		n := int(now.Sub(occ.At) / p.RepeatEvery)
		occ.Repeat = n
		occ.At = occ.At.Add(time.Duration(n) * p.RepeatEvery)
	}
	return occ, true
}

// RepeatCovered reports whether a repeat occurrence is already covered by a
// step message that went out (or may have) at lastSent: later than half a
// repeat period before the repeat came due. Repeats are anchored on since,
// so a first message sent late (watchdogd's first start on an old finding,
// the end of quiet hours or a silence, a Slack outage) could otherwise be
// followed by a repeat seconds later: a second ping for nothing new. A
// covered repeat is skipped, not postponed; the next one is a full period
// later. In steady operation the last message goes out about a period
// before the repeat, which is never covered.
func RepeatCovered(occ Occurrence, p *model.Policy, lastSent time.Time) bool {
	return occ.Repeat > 0 && !lastSent.IsZero() && lastSent.After(occ.At.Add(-p.RepeatEvery/2))
}
