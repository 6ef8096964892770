package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// TestPrune: resolved episodes older than the cutoff go with their actions;
// open ones, recent ones, and old ones with an action still pending (a
// resolve edit held back by a long silence) or claimed stay until it
// settles.
func TestPrune(t *testing.T) {
	ctx := context.Background()
	day := 24 * time.Hour
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			s := open(t, d.url(t))
			ep := func(id string) model.Episode {
				e := newEpisode(id)
				e.Identity = "stalled_turn|s1|" + id + "|"
				return e
			}
			_, _, err := s.Decide(ctx, func(model.Ledger) (model.Plan, error) {
				return model.Plan{Now: t0,
					Open: []model.Episode{ep("settled"), ep("pending"), ep("claimed"), ep("open"), ep("recent")},
					Actions: []model.Action{action("k-settled", "settled", "d"), action("k-pending", "pending", "d"),
						action("k-claimed", "claimed", "d"), action("k-open", "open", "d"), action("k-recent", "recent", "d")}}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			claim := func(key string) model.Claim {
				c, ok, err := s.Claim(ctx, key, "test", "tok-"+key, t0, time.Minute)
				if err != nil || !ok {
					t.Fatalf("claim %s: %v %v", key, ok, err)
				}
				return c
			}
			deliver := func(key string) {
				if err := s.Settle(ctx, key, "tok-"+key, model.Outcome{State: model.StateDelivered, ResultChannel: "C1", ResultTS: "1.1"}, t0); err != nil {
					t.Fatalf("settle %s: %v", key, err)
				}
			}
			claim("k-settled")
			deliver("k-settled")
			claim("k-claimed")
			claim("k-recent")
			deliver("k-recent")
			_, _, err = s.Decide(ctx, func(model.Ledger) (model.Plan, error) {
				return model.Plan{Now: t0, Resolve: []model.Resolve{{ID: "settled", At: t0, Reason: model.Because(model.ClearedTurnCompleted)},
					{ID: "pending", At: t0, Reason: model.Because(model.ClearedTurnCompleted)}, {ID: "claimed", At: t0, Reason: model.Because(model.ClearedTurnCompleted)},
					{ID: "recent", At: t0.Add(40 * day), Reason: model.Because(model.ClearedTurnCompleted)}}}, nil
			})
			if err != nil {
				t.Fatal(err)
			}

			n, err := s.Prune(ctx, t0.Add(30*day))
			if err != nil || n != 1 {
				t.Fatalf("prune: %d %v, want 1 (the settled one)", n, err)
			}
			if _, err := s.Episode(ctx, "settled"); err == nil {
				t.Error("the settled old episode survived")
			}
			if _, err := s.Action(ctx, "k-settled"); err == nil {
				t.Error("the settled old episode's action survived")
			}
			for _, id := range []string{"pending", "claimed", "open", "recent"} {
				e, err := s.Episode(ctx, id)
				if err != nil || len(e.Actions) != 1 {
					t.Errorf("episode %s after prune: %v, %d actions", id, err, len(e.Actions))
				}
			}

			// Once the held-back edit and the claim settle, they go too.
			claim("k-pending")
			deliver("k-pending")
			if err := s.Settle(ctx, "k-claimed", "tok-k-claimed", model.Outcome{State: model.StateFailed, Error: "channel_not_found"}, t0); err != nil {
				t.Fatal(err)
			}
			if n, err := s.Prune(ctx, t0.Add(30*day)); err != nil || n != 2 {
				t.Fatalf("second prune: %d %v, want 2", n, err)
			}
			if eps, err := s.Episodes(ctx, false, 0); err != nil || len(eps) != 2 {
				t.Fatalf("left after pruning: %d %v, want open and recent", len(eps), err)
			}
		})
	}
}
