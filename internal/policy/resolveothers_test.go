package policy

import (
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// TestResolvesToOtherOutlets: an episode that clears tells each outlet
// other than Slack that heard of it, once per action kind and channel, in
// reply to the first step that went out there; an outlet that heard
// nothing hears nothing, and one without a resolve (a nudge) is told
// nothing.
func TestResolvesToOtherOutlets(t *testing.T) {
	m := time.Minute
	resolves := map[model.ActionKind]model.ActionKind{model.ActionWebhook: model.ActionWebhook, model.ActionAlertmanager: model.ActionAlertmanager}
	step := func(key string, kind model.ActionKind, channel string, state model.State, uncertain bool) model.Action {
		return model.Action{Key: key, EpisodeID: "ep1", Seq: "step/stalled_turn/0/" + key, Kind: kind, Channel: channel, State: state, Uncertain: uncertain}
	}
	tests := []struct {
		name     string
		actions  []model.Action
		resolve  bool // the kind's policy says resolve (the default)
		resolves map[model.ActionKind]model.ActionKind
		want     string
	}{
		{name: "a delivered webhook step: its webhook hears the end",
			actions: []model.Action{step("a", model.ActionWebhook, "ops", model.StateDelivered, false)},
			resolve: true, resolves: resolves, want: "resolve/webhook/ops:webhook@ops^parent"},
		{name: "two webhooks, two steps each: one resolve per webhook",
			actions: []model.Action{step("a", model.ActionWebhook, "ops", model.StateDelivered, false), step("b", model.ActionWebhook, "audit", model.StateDelivered, false),
				step("c", model.ActionWebhook, "ops", model.StateDelivered, false)},
			resolve: true, resolves: resolves, want: "resolve/webhook/ops:webhook@ops^parent resolve/webhook/audit:webhook@audit^parent"},
		{name: "an alert that may have gone out (in flight) is ended",
			actions: []model.Action{step("a", model.ActionAlertmanager, "", model.StateClaimed, false)},
			resolve: true, resolves: resolves, want: "resolve/alertmanager/:alertmanager^parent"},
		{name: "a pending step that may have landed is followed by its end",
			actions: []model.Action{step("a", model.ActionWebhook, "ops", model.StatePending, true)},
			resolve: true, resolves: resolves, want: "resolve/webhook/ops:webhook@ops^parent"},
		{name: "a step that never went out: nothing to end",
			actions: []model.Action{step("a", model.ActionWebhook, "ops", model.StatePending, false), step("b", model.ActionAlertmanager, "", model.StateFailed, false),
				step("c", model.ActionWebhook, "audit", model.StateSuperseded, false)},
			resolve: true, resolves: resolves, want: ""},
		{name: "resolve: false says nothing anywhere",
			actions: []model.Action{step("a", model.ActionWebhook, "ops", model.StateDelivered, false)},
			resolve: false, resolves: resolves, want: ""},
		{name: "an outlet registered without a resolve is told nothing",
			actions: []model.Action{step("a", model.ActionNudge, "", model.StateDelivered, false)},
			resolve: true, resolves: resolves, want: ""},
		{name: "an outlet no longer registered is told nothing",
			actions: []model.Action{step("a", model.ActionWebhook, "ops", model.StateDelivered, false)},
			resolve: true, resolves: nil, want: ""},
	}
	for _, c := range tests {
		t.Run(c.name, func(t *testing.T) {
			e := model.Episode{ID: "ep1", Identity: "stalled_turn|s1|turn-1|", Kind: model.KindStalledTurn, Since: t0.Add(-30 * m),
				MissingSince: t0.Add(-m), Actions: c.actions}
			in := input(t0)
			in.Routing, in.Resolves = nil, c.resolves
			pol := model.DefaultPolicy(model.KindStalledTurn)
			pol.Resolve = &c.resolve
			in.Policies = map[model.Kind]*model.Policy{model.KindStalledTurn: &pol}
			p := Decide(model.Ledger{Open: []model.Episode{e}}, in)
			if len(p.Resolve) != 1 {
				t.Fatalf("resolved %v, want the episode", p.Resolve)
			}
			if got := seqs(p.Actions); got != c.want {
				t.Errorf("actions %q, want %q", got, c.want)
			}
			for _, a := range p.Actions {
				parent := ""
				for _, s := range c.actions { // the first step that went out there
					if s.Kind == a.Kind && s.Channel == a.Channel && parent == "" {
						parent = s.Key
					}
				}
				if a.Key != Key("ep1", a.Seq) || a.Digest == "" || a.ParentKey != parent {
					t.Errorf("resolve %+v: want key %s, a digest, parent %s", a, Key("ep1", a.Seq), parent)
				}
			}
		})
	}
}
