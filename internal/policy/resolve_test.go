package policy

import (
	"slices"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// TestForceResolve: `watchdogd episodes resolve` closes an episode now,
// whatever its resolve hold, through the same resolve as a cleared finding:
// pending steps are superseded and a first message that may have landed is
// edited in place.
func TestForceResolve(t *testing.T) {
	m := time.Minute
	held := cfgWith("slack:\n  token_file: /dev/null\n  default_channel: C-default\npolicy:\n  stalled_turn:\n    resolve_hold: 1h\n")
	opened := func(first model.State, uncertain bool) model.Ledger {
		in := input(t0, finding(model.KindStalledTurn, t0.Add(-20*m)))
		st := episode(Decide(model.Ledger{}, in), first)
		st.Open[0].Actions[0].Uncertain = uncertain
		// A later step, decided but not yet delivered.
		st.Open[0].Actions = append(st.Open[0].Actions, model.Action{Key: "later", EpisodeID: st.Open[0].ID,
			Kind: model.ActionSlack, State: model.StatePending})
		return st
	}
	tests := []struct {
		name    string
		state   model.Ledger
		id      string
		slack   bool
		hold    bool // the kind's resolve_hold is an hour
		missing time.Time
		// want
		ok      bool
		actions string
		// supersededFirst: the first message is superseded beside the
		// later step, which always is.
		supersededFirst bool
	}{
		{name: "delivered first message: edited, later step superseded",
			state: opened(model.StateDelivered, false), id: "ep1", slack: true,
			ok: true, actions: "resolve:slack_update@C-default^parent"},
		{name: "an hour's hold does not delay a resolve by hand",
			state: opened(model.StateDelivered, false), id: "ep1", slack: true, hold: true,
			ok: true, actions: "resolve:slack_update@C-default^parent"},
		{name: "missing for a minute of the hold: resolved now",
			state: opened(model.StateDelivered, false), id: "ep1", slack: true, hold: true, missing: t0.Add(-m),
			ok: true, actions: "resolve:slack_update@C-default^parent"},
		{name: "a first message that may have landed (claimed) is edited too",
			state: opened(model.StateClaimed, false), id: "ep1", slack: true,
			ok: true, actions: "resolve:slack_update@C-default^parent"},
		{name: "an uncertain pending first message may have landed: edited, not superseded",
			state: opened(model.StatePending, true), id: "ep1", slack: true,
			ok: true, actions: "resolve:slack_update@C-default^parent"},
		{name: "a first message that never went out resolves silently and is superseded",
			state: opened(model.StatePending, false), id: "ep1", slack: true,
			ok: true, actions: "", supersededFirst: true},
		{name: "Slack no longer configured: resolved without an edit",
			state: opened(model.StateDelivered, false), id: "ep1", slack: false,
			ok: true, actions: ""},
		{name: "not an open episode: nothing planned",
			state: opened(model.StateDelivered, false), id: "ep2", slack: true,
			ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := input(t0.Add(2*m), finding(model.KindStalledTurn, t0.Add(-20*m)))
			in.Reason = func(model.Episode) model.Reason { return model.Because(model.ClearedByHand) }
			if tt.hold {
				configure(&in, held)
			}
			if !tt.slack {
				in.Routing = nil
			}
			tt.state.Open[0].MissingSince = tt.missing
			p, e := ForceResolve(tt.state, tt.id, in)
			if (e != nil) != tt.ok || e != nil && e.ID != tt.id {
				t.Fatalf("episode = %+v, want %s: %v", e, tt.id, tt.ok)
			}
			if !tt.ok {
				if len(p.Resolve)+len(p.Actions)+len(p.Supersede)+len(p.Missing) != 0 {
					t.Fatalf("plan for an episode that is not open: %+v", p)
				}
				return
			}
			if len(p.Resolve) != 1 || p.Resolve[0].ID != tt.id || p.Resolve[0].Reason.Words() != "resolved by hand" || !p.Resolve[0].At.Equal(in.Now) {
				t.Errorf("resolve = %+v, want %s now, resolved by hand", p.Resolve, tt.id)
			}
			if got := seqs(p.Actions); got != tt.actions {
				t.Errorf("actions = %q, want %q", got, tt.actions)
			}
			want := []string{"later"}
			if tt.supersededFirst {
				want = []string{tt.state.Open[0].Actions[0].Key, "later"}
			}
			if !slices.Equal(p.Supersede, want) {
				t.Errorf("superseded %q, want %q", p.Supersede, want)
			}
			if len(p.Missing) != 0 {
				t.Errorf("a resolve by hand recorded a miss: %v", p.Missing)
			}
		})
	}
}
