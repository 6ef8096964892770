// Package policy decides what watchdogd does about its findings. Every
// decision here is a pure function of (ledger state, findings, config, now):
// which episodes open, refresh or resolve, which step of an escalation
// ladder is due, where a message goes, and whether a silence or quiet hours
// defer it. I/O stays with the callers (internal/cycle, the commands).
package policy

import (
	"slices"
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

// DueSteps returns, for each destination the ladder sends to (dest names a
// step's), the newest step occurrence due at now for an episode that began
// at since, in ladder order. A step replaces an earlier one only at the
// same destination: with [slack after 0s, alertmanager after 15m] both are
// due from 15 minutes on, and both go out. Only the newest per destination
// is returned, so an outage, a silence or quiet hours never release a
// burst of missed steps or repeats. The ladder's last step repeats every
// repeat_every.
//
// since is when the condition began (a stall's last output, a question's
// asking), not when the finding was first seen: steps whose after is at
// or below the kind's threshold are all due when the episode opens.
func DueSteps(since time.Time, p *model.Policy, now time.Time, dest func(model.Step) string) []Occurrence {
	newest := map[string]int{}
	var order []string
	for i, s := range p.Steps {
		if since.Add(s.After).After(now) {
			continue
		}
		d := dest(s)
		if _, ok := newest[d]; !ok {
			order = append(order, d)
		}
		newest[d] = i
	}
	out := make([]Occurrence, 0, len(order))
	for _, d := range order {
		i := newest[d]
		occ := Occurrence{Step: i, At: since.Add(p.Steps[i].After)}
		if i == len(p.Steps)-1 && p.RepeatEvery > 0 {
			n := int(now.Sub(occ.At) / p.RepeatEvery)
			occ.Repeat = n
			occ.At = occ.At.Add(time.Duration(n) * p.RepeatEvery)
		}
		out = append(out, occ)
	}
	slices.SortFunc(out, func(a, b Occurrence) int { return a.Step - b.Step })
	return out
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
