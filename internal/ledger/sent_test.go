package ledger_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
)

// TestEpisodesSentTo: the episodes an outlet heard of — a step of its kind
// delivered, in flight or maybe landed — open, or resolved since the
// cutoff; not those whose step never went out, nor other outlets'.
func TestEpisodesSentTo(t *testing.T) {
	ctx := context.Background()
	for _, d := range dialects[:2] {
		t.Run(d.name, func(t *testing.T) {
			s := open(t, d.url(t))
			type ep struct {
				id       string
				kind     model.ActionKind
				state    model.State
				unsure   bool
				resolved time.Time
			}
			eps := []ep{
				{id: "delivered", kind: model.ActionAlertmanager, state: model.StateDelivered},
				{id: "claimed", kind: model.ActionAlertmanager, state: model.StateClaimed},
				{id: "maybe", kind: model.ActionAlertmanager, state: model.StatePending, unsure: true},
				{id: "pending", kind: model.ActionAlertmanager, state: model.StatePending},
				{id: "failed", kind: model.ActionAlertmanager, state: model.StateFailed},
				{id: "webhook", kind: model.ActionWebhook, state: model.StateDelivered},
				{id: "ended-recently", kind: model.ActionAlertmanager, state: model.StateDelivered, resolved: t0.Add(-5 * time.Minute)},
				{id: "ended-long-ago", kind: model.ActionAlertmanager, state: model.StateDelivered, resolved: t0.Add(-20 * time.Minute)},
			}
			var p model.Plan
			for _, e := range eps {
				me := newEpisode(e.id)
				me.Identity = "stalled_turn|" + e.id + "|turn-1|"
				p.Open = append(p.Open, me)
				a := action("k-"+e.id, e.id, "d")
				a.Seq, a.Kind, a.State, a.Uncertain = "step/stalled_turn/0/0", e.kind, e.state, e.unsure
				p.Actions = append(p.Actions, a)
			}
			if _, _, err := s.Decide(ctx, func(model.Ledger) (model.Plan, error) { return p, nil }); err != nil {
				t.Fatal(err)
			}
			for _, e := range eps {
				if err := setState(ctx, s, "k-"+e.id, e.state, e.unsure); err != nil {
					t.Fatal(err)
				}
				if !e.resolved.IsZero() {
					if _, _, err := s.Decide(ctx, func(model.Ledger) (model.Plan, error) {
						return model.Plan{Resolve: []model.Resolve{{ID: e.id, At: e.resolved, Reason: model.Because(model.ClearedOther)}}}, nil
					}); err != nil {
						t.Fatal(err)
					}
				}
			}
			got, err := s.EpisodesSentTo(ctx, model.ActionAlertmanager, t0.Add(-15*time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, e := range got {
				ids = append(ids, e.ID)
			}
			slices.Sort(ids)
			if want := []string{"claimed", "delivered", "ended-recently", "maybe"}; !slices.Equal(ids, want) {
				t.Errorf("episodes %v, want %v", ids, want)
			}
		})
	}
}

// setState brings a pending action to state through the protocol's own
// calls: claimed, then settled (pending again, when it may have landed).
func setState(ctx context.Context, s *ledger.Store, key string, state model.State, uncertain bool) error {
	if state == model.StatePending && !uncertain {
		return nil
	}
	if _, ok, err := s.Claim(ctx, key, "test", "tok-"+key, t0, time.Minute); err != nil || !ok {
		return fmt.Errorf("claim %s: %v: %w", key, ok, err)
	}
	switch state {
	case model.StateClaimed:
		return nil
	case model.StatePending:
		return s.Settle(ctx, key, "tok-"+key, model.Outcome{State: model.StatePending, NextAttempt: t0.Add(time.Minute), Uncertain: true}, t0)
	}
	return s.Settle(ctx, key, "tok-"+key, model.Outcome{State: state}, t0)
}
