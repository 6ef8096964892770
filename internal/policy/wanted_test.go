package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// TestWanted: Wanted names, for each episode still reported, the key of its
// newest due step when the loaded state does not hold it — the one key
// Decide would take for a new step — and nothing else.
func TestWanted(t *testing.T) {
	m := time.Minute
	stalled := finding(model.KindStalledTurn, t0.Add(-20*m))
	opened := episode(Decide(model.Ledger{}, input(t0, stalled)), model.StateDelivered)
	e := opened.Open[0]
	key := func(seq string) string { return Key(e.ID, seq) }
	cases := []struct {
		name string
		st   model.Ledger
		now  time.Time
		fs   []scan.Finding
		want []string
	}{
		// A finding with no open episode: a new episode, nothing stored.
		{"new finding", model.Ledger{}, t0, []scan.Finding{stalled}, nil},
		// The due step is the loaded first step.
		{"due step loaded", opened, t0.Add(m), []scan.Finding{stalled}, nil},
		// 30 min after since the second step is due and not loaded: stored
		// only if an earlier policy decided it, so it is looked up.
		{"due step not loaded", opened, t0.Add(15 * m), []scan.Finding{stalled}, []string{key("step/stalled_turn/1/0")}},
		// Reported twice: Decide reads the first, and so does Wanted.
		{"reported twice", opened, t0.Add(15 * m), []scan.Finding{stalled, stalled}, []string{key("step/stalled_turn/1/0")}},
		// No longer reported: a resolve, which needs no step.
		{"not reported", opened, t0.Add(15 * m), nil, nil},
	}
	for _, c := range cases {
		if got := Wanted(c.st, input(c.now, c.fs...)); strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// The identity of a question's episode holds across its two kinds: after
	// a flip, the new kind's ladder is the one looked up.
	q := finding(model.KindShadowedClarification, t0.Add(-90*m))
	qst := episode(Decide(model.Ledger{}, input(t0, q)), model.StateDelivered)
	q.Kind = model.KindUnansweredClarification
	want := Key(qst.Open[0].ID, "step/unanswered_clarification/1/0")
	if got := Wanted(qst, input(t0, q)); len(got) != 1 || got[0] != want {
		t.Errorf("after a flip: %v, want [%s]", got, want)
	}
}
