package ledger_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
)

// episodeOf is an episode of kind k on its own session, since an hour
// before t0.
func episodeOf(id string, k model.Kind) model.Episode {
	e := newEpisode(id)
	e.Kind, e.SessionID, e.Identity = k, "s-"+id, string(k)+"|s-"+id+"||"
	return e
}

// openAll opens the episodes in one decision.
func openAll(t testing.TB, s *ledger.Store, es ...model.Episode) {
	t.Helper()
	if _, _, err := s.Decide(context.Background(), func(model.Ledger) (model.Plan, error) {
		return model.Plan{Now: t0, Open: es}, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// resolveAll resolves the episodes by id in one decision, each with why.
func resolveAll(s *ledger.Store, at time.Time, why model.Reason, ids ...string) error {
	_, _, err := s.Decide(context.Background(), func(model.Ledger) (model.Plan, error) {
		p := model.Plan{Now: at}
		for _, id := range ids {
			p.Resolve = append(p.Resolve, model.Resolve{ID: id, At: at, Reason: why})
		}
		return p, nil
	})
	return err
}

// TestResolvesAreTakenOnce: a resolve stores its code beside its words;
// the resolves are taken in the order they committed, in batches of at
// most the limit, each once — across a restart (a new Store on the same
// ledger) and when another process resolved them — and a resolve is
// taken as the kind it resolved as and timed from its since.
func TestResolvesAreTakenOnce(t *testing.T) {
	ctx := context.Background()
	for _, d := range dialects[:2] {
		t.Run(d.name, func(t *testing.T) {
			url := d.url(t)
			s := open(t, url)
			q := episodeOf("q1", model.KindUnansweredClarification)
			openAll(t, s, episodeOf("e1", model.KindStalledTurn), episodeOf("e2", model.KindStalledTurn), q)
			// The question turned shadowed before it was answered.
			if _, _, err := s.Decide(ctx, func(model.Ledger) (model.Plan, error) {
				return model.Plan{Now: t0, Refresh: []model.Refresh{{ID: "q1", Kind: model.KindShadowedClarification, KindChanges: 1, TaskTitle: "Fix", LastSeen: t0, Finding: "{}"}}}, nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := resolveAll(s, t0.Add(time.Minute), model.Because(model.ClearedAgentOutput), "e1"); err != nil {
				t.Fatal(err)
			}
			if err := resolveAll(s, t0.Add(2*time.Minute), model.Reason{Code: model.ClearedFromSlack, Who: "U1"}, "q1"); err != nil {
				t.Fatal(err)
			}
			e, err := s.Episode(ctx, "q1")
			if err != nil || e.Cleared != model.ClearedFromSlack || e.Resolution != "resolved from Slack by U1" {
				t.Fatalf("stored %q (%q), %v", e.Cleared, e.Resolution, err)
			}
			got, err := s.TakeResolved(ctx, "a", 1)
			if err != nil || len(got) != 1 || got[0].Cleared != model.ClearedAgentOutput || got[0].Kind != model.KindStalledTurn || got[0].Seconds() != 3660 {
				t.Fatalf("first take: %+v %v", got, err)
			}
			// A restart: the next take, by another Store, goes on from there.
			s2 := open(t, url)
			got, err = s2.TakeResolved(ctx, "b", 10)
			if err != nil || len(got) != 1 || got[0].Kind != model.KindShadowedClarification || got[0].Cleared != model.ClearedFromSlack {
				t.Fatalf("second take: %+v %v", got, err)
			}
			if got, err := s.TakeResolved(ctx, "a", 10); err != nil || len(got) != 0 {
				t.Fatalf("taken again: %+v %v", got, err)
			}
			// Another process resolves (episodes resolve): taken next.
			other := open(t, url)
			if err := resolveAll(other, t0.Add(3*time.Minute), model.Because(model.ClearedByHand), "e2"); err != nil {
				t.Fatal(err)
			}
			// Resolving one resolved already numbers nothing taken.
			if err := resolveAll(other, t0.Add(4*time.Minute), model.Because(model.ClearedByHand), "e1"); err != nil {
				t.Fatal(err)
			}
			got, err = s.TakeResolved(ctx, "a", 10)
			if err != nil || len(got) != 1 || got[0].Cleared != model.ClearedByHand || got[0].Seconds() != 3780 {
				t.Fatalf("after another process's resolve: %+v %v", got, err)
			}
		})
	}
}

// TestTakersNeverShareAResolve: two takers (two replicas) and deciders
// resolving at the same time: every resolve is taken, by one of them,
// once.
func TestTakersNeverShareAResolve(t *testing.T) {
	ctx := context.Background()
	const decisions, each = 40, 10
	for _, d := range dialects[:2] {
		t.Run(d.name, func(t *testing.T) {
			url := d.url(t)
			s := open(t, url)
			var all []model.Episode
			for i := range decisions * each {
				all = append(all, episodeOf(fmt.Sprintf("e%03d", i), model.KindNeverStarted))
			}
			openAll(t, s, all...)
			var wg sync.WaitGroup
			resolvers := []*ledger.Store{open(t, url), open(t, url)}
			for r, st := range resolvers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := r; i < decisions; i += len(resolvers) {
						var ids []string
						for j := range each {
							ids = append(ids, all[i*each+j].ID)
						}
						if err := resolveAll(st, t0, model.Because(model.ClearedTurnCompleted), ids...); err != nil {
							t.Error(err)
						}
					}
				}()
			}
			done := make(chan struct{})
			var mu sync.Mutex
			taken := map[int64]string{}
			take := func(name string, st *ledger.Store) {
				defer wg.Done()
				for {
					select {
					case <-done:
						return
					default:
					}
					got, err := st.TakeResolved(ctx, name, 2)
					if err != nil {
						t.Error(err)
						return
					}
					if len(got) == 0 {
						time.Sleep(time.Millisecond)
					}
					mu.Lock()
					for _, r := range got {
						if by, dup := taken[r.Seq]; dup {
							t.Errorf("resolve %d taken by %s and %s", r.Seq, by, name)
						}
						taken[r.Seq] = name
					}
					mu.Unlock()
				}
			}
			wg.Add(2)
			go take("a", open(t, url))
			go take("b", open(t, url))
			deadline := time.Now().Add(60 * time.Second)
			for {
				mu.Lock()
				n := len(taken)
				mu.Unlock()
				if n == decisions*each || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			close(done)
			wg.Wait()
			if len(taken) != decisions*each {
				t.Fatalf("%d resolves taken, want %d", len(taken), decisions*each)
			}
		})
	}
}
