package ledger_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
)

// TestDueAction: one action is read for delivery exactly when DueActions
// would list it: pending and due, or claimed past its TTL; not while
// another process holds it fresh, nor once settled, nor when unknown.
func TestDueAction(t *testing.T) {
	ctx := context.Background()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			s := open(t, d.url(t))
			if _, _, err := s.Decide(ctx, func(model.Ledger) (model.Plan, error) {
				return model.Plan{Now: t0, Open: []model.Episode{newEpisode("ep1")}, Actions: []model.Action{action("k1", "ep1", "d1")}}, nil
			}); err != nil {
				t.Fatal(err)
			}
			due := func(at time.Time) bool {
				t.Helper()
				got, ok, err := s.DueAction(ctx, "k1", at, time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				if ok && (got.Key != "k1" || got.Episode.ID != "ep1" || got.Episode.SessionID != "s1") {
					t.Fatalf("due %+v", got)
				}
				return ok
			}
			if !due(t0) || due(t0.Add(-time.Second)) {
				t.Fatal("a pending action is due from its next attempt on")
			}
			if _, ok, err := s.DueAction(ctx, "nope", t0, time.Minute); ok || err != nil {
				t.Fatalf("an unknown key: %v %v", ok, err)
			}
			if _, ok, err := s.Claim(ctx, "k1", "h", "tok", t0, time.Minute); !ok || err != nil {
				t.Fatalf("claim %v %v", ok, err)
			}
			if due(t0.Add(30*time.Second)) || !due(t0.Add(2*time.Minute)) {
				t.Fatal("a claim is due once stale, not before")
			}
			if err := s.Settle(ctx, "k1", "tok", model.Outcome{State: model.StateDelivered}, t0); err != nil {
				t.Fatal(err)
			}
			if due(t0.Add(time.Hour)) {
				t.Fatal("a settled action is due")
			}
		})
	}
}

// TestSilenceOnce: a silence stored again under its id (a click's, after a
// crash) changes nothing; one kept until its finding clears says so, and
// the episode it was made on is kept.
func TestSilenceOnce(t *testing.T) {
	ctx := context.Background()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			s := open(t, d.url(t))
			v := ledger.Silence{ID: "click-1", Matchers: model.Matchers{model.Equal("session_id", "s1"), model.Equal("kind", "stalled_turn")}, CreatedBy: "slack:U0ALICE", CreatedAt: t0,
				Until: t0.Add(time.Hour), UntilClear: true, Identity: "stalled_turn|s1|turn-1|"}
			for i := 0; i < 2; i++ {
				if err := s.AddSilence(ctx, v); err != nil {
					t.Fatal(err)
				}
				v.Until = t0.Add(time.Minute)                                 // a second store would shorten it
				v.Matchers = append(v.Matchers, model.Equal("task_id", "t9")) // and add a matcher
			}
			all, err := s.Silences(ctx, t0, true)
			if err != nil || len(all) != 1 || !all[0].UntilClear || !all[0].Until.Equal(t0.Add(time.Hour)) || all[0].CreatedBy != "slack:U0ALICE" ||
				all[0].Identity != "stalled_turn|s1|turn-1|" || all[0].Matchers.String() != `session_id="s1" kind="stalled_turn"` {
				t.Fatalf("silences %+v %v", all, err)
			}
		})
	}
}

// TestDecideOnOneAtATime: decisions on one episode read it whole inside
// their transaction, one after the other, across processes: of eight
// clicks decided at once from two stores, each saving a click only when
// the episode holds none, exactly one is saved, also where PostgreSQL's
// default isolation is REPEATABLE READ. A decision that read the episode
// before its transaction, or at REPEATABLE READ, would let them through.
func TestDecideOnOneAtATime(t *testing.T) {
	ctx := context.Background()
	// A server whose default isolation is REPEATABLE READ, as a DBA may
	// set it: the ledger's decisions must not take it.
	repeatable := dialect{"postgres-repeatable-read", func(t testing.TB) string {
		return dbWith(t, "default_transaction_isolation TO 'repeatable read'")
	}}
	for _, d := range append(slices.Clone(dialects), repeatable) {
		t.Run(d.name, func(t *testing.T) {
			url := d.url(t)
			stores := []*ledger.Store{open(t, url), open(t, url)}
			if _, _, err := stores[0].Decide(ctx, func(model.Ledger) (model.Plan, error) {
				return model.Plan{Now: t0, Open: []model.Episode{newEpisode("ep1")}}, nil
			}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for i := range 8 {
				wg.Go(func() {
					_, err := stores[i%2].DecideOn(ctx, "ep1", func(e model.Episode) (model.Plan, error) {
						time.Sleep(10 * time.Millisecond) // a decision that takes a moment
						for _, a := range e.Actions {
							if strings.HasPrefix(a.Seq, "click/") {
								return model.Plan{}, nil // someone clicked first
							}
						}
						a := action(fmt.Sprintf("click-%d", i), "ep1", "d")
						a.Seq = fmt.Sprintf("click/%d", i)
						return model.Plan{Now: t0, Actions: []model.Action{a}}, nil
					})
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			e, err := stores[0].Episode(ctx, "ep1")
			if err != nil {
				t.Fatal(err)
			}
			if len(e.Actions) != 1 {
				var keys []string
				for _, a := range e.Actions {
					keys = append(keys, a.Key)
				}
				t.Fatalf("%d clicks saved, want 1: %v", len(e.Actions), keys)
			}
			if _, err := stores[1].DecideOn(ctx, "nope", func(model.Episode) (model.Plan, error) {
				return model.Plan{}, nil
			}); !errors.Is(err, sql.ErrNoRows) {
				t.Fatalf("an unknown episode: %v, want sql.ErrNoRows", err)
			}
		})
	}
}
