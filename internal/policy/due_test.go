package policy

import (
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
)

func TestDue(t *testing.T) {
	since := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	m := time.Minute
	ladder := &config.Policy{Steps: []config.Step{{After: 0, Action: "slack"}, {After: 30 * m, Action: "slack", Mention: true}}}
	repeating := &config.Policy{Steps: ladder.Steps, RepeatEvery: time.Hour}
	late := &config.Policy{Steps: []config.Step{{After: 10 * m, Action: "slack"}}}
	cases := []struct {
		name   string
		p      *config.Policy
		at     time.Duration // since + at is now
		ok     bool
		step   int
		repeat int
	}{
		{"first step is due at since", ladder, 0, true, 0, 0},
		{"still the first step before 30m", ladder, 29 * m, true, 0, 0},
		{"second step at exactly 30m", ladder, 30 * m, true, 1, 0},
		// Without repeat_every the last step stays the newest forever.
		{"no repeats without repeat_every", ladder, 10 * time.Hour, true, 1, 0},
		{"a repeat is due one period after the last step", repeating, 90 * m, true, 1, 1},
		{"just before the first repeat", repeating, 89 * m, true, 1, 0},
		// After an outage of many hours only the newest repeat is due.
		{"only the newest repeat after an outage", repeating, 10*time.Hour + 30*m + 5*m, true, 1, 10},
		{"nothing before the first step's delay", late, 9 * m, false, 0, 0},
		{"a delayed first step", late, 10 * m, true, 0, 0},
		// A clock behind since (now before since) is never due.
		{"now before since", ladder, -m, false, 0, 0},
	}
	for _, c := range cases {
		occ, ok := Due(since, c.p, since.Add(c.at))
		if ok != c.ok || (ok && (occ.Step != c.step || occ.Repeat != c.repeat)) {
			t.Errorf("%s: got step %d repeat %d ok %v, want step %d repeat %d ok %v", c.name, occ.Step, occ.Repeat, ok, c.step, c.repeat, c.ok)
		}
	}
}
