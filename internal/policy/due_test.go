package policy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// TestDue: the newest step occurrence due of a ladder to one destination
// (DueSteps with every step's destination the same).
func TestDue(t *testing.T) {
	since := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	m := time.Minute
	ladder := &model.Policy{Steps: []model.Step{{After: 0, Action: "slack"}, {After: 30 * m, Action: "slack", Mention: true}}}
	repeating := &model.Policy{Steps: ladder.Steps, RepeatEvery: time.Hour}
	late := &model.Policy{Steps: []model.Step{{After: 10 * m, Action: "slack"}}}
	cases := []struct {
		name   string
		p      *model.Policy
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
		due := DueSteps(since, c.p, since.Add(c.at), func(model.Step) string { return "" })
		if len(due) > 1 {
			t.Fatalf("%s: %d occurrences to one destination: %+v", c.name, len(due), due)
		}
		var occ Occurrence
		ok := len(due) == 1
		if ok {
			occ = due[0]
		}
		if ok != c.ok || (ok && (occ.Step != c.step || occ.Repeat != c.repeat)) {
			t.Errorf("%s: got step %d repeat %d ok %v, want step %d repeat %d ok %v", c.name, occ.Step, occ.Repeat, ok, c.step, c.repeat, c.ok)
		}
	}
}

func TestRepeatCovered(t *testing.T) {
	h, m := time.Hour, time.Minute
	p := &model.Policy{Steps: []model.Step{{After: 0, Action: "slack"}}, RepeatEvery: h}
	due := time.Date(2026, 11, 30, 9, 0, 34, 0, time.UTC) // the repeat's At
	cases := []struct {
		name     string
		repeat   int
		lastSent time.Duration // relative to due; 0 means never sent
		covered  bool
	}{
		// Steady operation: the previous message went out a period
		// before, give or take a tick.
		{"previous message a period earlier", 1, -h + 20*time.Second, false},
		{"previous message delivered late within the period's first half", 1, -31 * m, false},
		// A first post released by quiet hours at 09:00:05; the since-
		// anchored repeat comes due 29 s later: no second ping.
		{"a message moments before the repeat came due", 1, -29 * time.Second, true},
		{"half a period before, exactly: not covered", 1, -30 * m, false},
		// A message retried through a Slack outage that landed after the
		// repeat came due already told the channel.
		{"a message sent after the repeat came due", 2, 15 * m, true},
		{"nothing sent yet", 1, 0, false},
		// Steps themselves are never covered: an escalation is the ladder.
		{"the step itself", 0, -5 * time.Second, false},
	}
	for _, c := range cases {
		var last time.Time
		if c.lastSent != 0 {
			last = due.Add(c.lastSent)
		}
		if got := RepeatCovered(Occurrence{Step: 0, Repeat: c.repeat, At: due}, p, last); got != c.covered {
			t.Errorf("%s: covered %v, want %v", c.name, got, c.covered)
		}
	}
}

// TestDueSteps: the newest due step per destination; a later step to
// another destination never replaces an earlier one.
func TestDueSteps(t *testing.T) {
	since := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	m := time.Minute
	byAction := func(s model.Step) string { return string(s.Action) }
	slackThenAM := &model.Policy{Steps: []model.Step{{After: 0, Action: "slack"}, {After: 15 * m, Action: "alertmanager"}}}
	mixed := &model.Policy{Steps: []model.Step{{After: 0, Action: "slack"}, {After: time.Second, Action: "alertmanager"},
		{After: 30 * m, Action: "slack", Mention: true}}, RepeatEvery: time.Hour}
	cases := []struct {
		name string
		p    *model.Policy
		at   time.Duration
		want string // step/repeat per destination, in ladder order
	}{
		{"only Slack is due at first", slackThenAM, 0, "0/0"},
		// A stall seen at stall_after (15m): both are due, both go.
		{"Slack and Alertmanager due together", slackThenAM, 15 * m, "0/0 1/0"},
		{"a second later, both", mixed, time.Second, "0/0 1/0"},
		// The mention replaces the first Slack step only; the alert stays.
		{"the newest Slack step and the alert", mixed, 30 * m, "1/0 2/0"},
		// The last step repeats; the alert does not.
		{"a repeat of the last step beside the alert", mixed, 90*m + 5*m, "1/0 2/1"},
		{"nothing before since", mixed, -m, ""},
	}
	for _, c := range cases {
		var got []string
		for _, o := range DueSteps(since, c.p, since.Add(c.at), byAction) {
			got = append(got, fmt.Sprintf("%d/%d", o.Step, o.Repeat))
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: due %q, want %q", c.name, g, c.want)
		}
	}
}
