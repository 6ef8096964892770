package ledger_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/pgtest"
)

// stormSize is how many episodes a storm opens and resolves at once: a
// kandev restart on a busy install.
const stormSize = 5000

// BenchmarkStorm: the two decisions of a page storm on each ledger, open
// (every episode and its first post inserted in one decision) and resolve
// (every episode marked gone, resolved, its pending steps superseded and
// a resolve edit of its first post inserted, in one decision). Both
// run inside the decision's transaction, which holds the ledger's decide
// lock: on PostgreSQL every statement is a round trip, so their number is
// what a real network multiplies.
//
//	go test ./internal/ledger -run '^$' -bench BenchmarkStorm -benchtime 5x
//
// The ledger in another zone: PostgreSQL through links adding 1 ms and 8 ms
// to every round trip (postgres-rtt1ms, postgres-rtt8ms).
func BenchmarkStorm(b *testing.B) {
	ctx := context.Background()
	for _, d := range append(dialects[:2:2], linked(time.Millisecond), linked(8*time.Millisecond)) {
		b.Run(d.name+"/open", func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				s := open(b, d.url(b))
				p := stormOpen(stormSize)
				b.StartTimer()
				if _, _, err := s.Decide(ctx, func(model.Ledger) (model.Plan, error) { return p, nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.name+"/resolve", func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				s := open(b, d.url(b))
				if _, _, err := s.Decide(ctx, func(model.Ledger) (model.Plan, error) { return stormOpen(stormSize), nil }); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				_, ap, err := s.Decide(ctx, func(st model.Ledger) (model.Plan, error) {
					if len(st.Open) != stormSize {
						return model.Plan{}, fmt.Errorf("%d open", len(st.Open))
					}
					return stormResolve(st), nil
				})
				if err != nil || ap.Inserted != stormSize {
					b.Fatal(err, ap)
				}
			}
		})
	}
}

// linked is PostgreSQL through a link adding rtt to every round trip.
func linked(rtt time.Duration) dialect {
	return dialect{fmt.Sprintf("postgres-rtt%v", rtt), func(t testing.TB) string {
		u, err := pg.NewDatabase(context.Background(), "ledger")
		if err != nil {
			t.Fatal(err)
		}
		return pgtest.Through(t, u, rtt)
	}}
}

// stormOpen opens n episodes, each with its first post decided and a
// second step pending.
func stormOpen(n int) model.Plan {
	p := model.Plan{Now: t0}
	for i := range n {
		id := fmt.Sprintf("ep%05d", i)
		e := newEpisode(id)
		e.Identity, e.SessionID = "stalled_turn|s"+id+"|turn|", "s"+id
		p.Open = append(p.Open, e)
		first := action("k"+id, id, "d")
		next := action("n"+id, id, "d")
		next.Seq = "step/x/1/0"
		p.Actions = append(p.Actions, first, next)
	}
	return p
}

// stormResolve resolves every open episode as policy.Decide does when the
// storm clears.
func stormResolve(st model.Ledger) model.Plan {
	now := t0.Add(time.Hour)
	p := model.Plan{Now: now}
	for _, e := range st.Open {
		p.Missing = append(p.Missing, model.Missing{ID: e.ID, Since: now})
		p.Resolve = append(p.Resolve, model.Resolve{ID: e.ID, At: now, Reason: model.Because(model.ClearedTurnCompleted)})
		for _, a := range e.Actions {
			if a.Seq != "step/x/0/0" {
				p.Supersede = append(p.Supersede, a.Key)
			}
		}
		p.Actions = append(p.Actions, model.Action{Key: "r" + e.ID, EpisodeID: e.ID, Seq: "resolve", Kind: model.ActionSlackUpdate,
			Channel: "C1", ParentKey: "k" + e.ID, Digest: "r", Body: `{"text":"cleared"}`, CreatedAt: now, NextAttempt: now})
	}
	return p
}

// TestStormDecisions: decisions larger than a batch (batch.go) write every
// row, on every dialect: 2,500 episodes opened with two actions each (three
// episode batches and six action batches on PostgreSQL), among them steps decided twice in the
// plan, with another digest (a conflict, in its own batch and in a later
// one) or the same (nothing new); then all of them refreshed; then all of them resolved, their second
// steps superseded and a resolve edit saved for each.
func TestStormDecisions(t *testing.T) {
	const n = 2500
	ctx := context.Background()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			s := open(t, d.url(t))
			p := stormOpen(n)
			// Decided twice: in a later batch the same way, in a later
			// batch another way, and in the same batch another way.
			again, conflicting, near := p.Actions[7], p.Actions[3001], p.Actions[1]
			conflicting.Digest, near.Digest = "other", "near"
			p.Actions = append(p.Actions, again, conflicting)
			p.Actions = slices.Insert(p.Actions, 2, near)
			_, ap, err := s.Decide(ctx, func(model.Ledger) (model.Plan, error) { return p, nil })
			var keys []string
			for _, c := range ap.Conflicts {
				keys = append(keys, c.Key)
			}
			if err != nil || ap.Inserted != 2*n || !slices.Equal(keys, []string{near.Key, conflicting.Key}) {
				t.Fatalf("open: %v, %d inserted, conflicts %+v", err, ap.Inserted, ap.Conflicts)
			}
			for _, k := range []string{near.Key, conflicting.Key} {
				if a, err := s.Action(ctx, k); err != nil || a.Digest != "d" || a.Conflicts != 1 {
					t.Fatalf("%s: the first decision is not the one stored: %v %+v", k, err, a)
				}
			}
			st, err := s.Peek(ctx)
			if err != nil || len(st.Open) != n {
				t.Fatalf("after open: %v, %d open", err, len(st.Open))
			}
			for _, e := range st.Open {
				if len(e.Actions) != 2 || e.Since != t0.Add(-time.Hour) || e.TaskTitle != "Fix" {
					t.Fatalf("episode %s as stored: %+v", e.ID, e)
				}
			}
			// Every episode still reported: refreshed, in three batches.
			if _, _, err = s.Decide(ctx, func(st model.Ledger) (model.Plan, error) {
				p := model.Plan{Now: t0.Add(time.Minute)}
				for _, e := range st.Open {
					p.Refresh = append(p.Refresh, model.Refresh{ID: e.ID, Kind: e.Kind, TaskTitle: "Fix " + e.ID, LastSeen: p.Now, Finding: "{}"})
				}
				return p, nil
			}); err != nil {
				t.Fatal(err)
			}
			if st, err = s.Peek(ctx); err != nil {
				t.Fatal(err)
			}
			for _, e := range st.Open {
				if e.TaskTitle != "Fix "+e.ID || !e.LastSeen.Equal(t0.Add(time.Minute)) {
					t.Fatalf("episode %s after the refresh: title %q, last seen %v", e.ID, e.TaskTitle, e.LastSeen)
				}
			}
			_, ap, err = s.Decide(ctx, func(st model.Ledger) (model.Plan, error) { return stormResolve(st), nil })
			if err != nil || ap.Inserted != n {
				t.Fatalf("resolve: %v, %d inserted", err, ap.Inserted)
			}
			if st, err = s.Peek(ctx); err != nil || len(st.Open) != 0 {
				t.Fatalf("after resolve: %v, %d open", err, len(st.Open))
			}
			for _, i := range []int{0, n / 2, n - 1} {
				id := fmt.Sprintf("ep%05d", i)
				e, err := s.Episode(ctx, id)
				if err != nil || e.ResolvedAt.IsZero() || e.MissingSince.IsZero() || e.Resolution != "the turn completed" {
					t.Fatalf("%s: %v %+v", id, err, e)
				}
				states := map[string]model.State{}
				for _, a := range e.Actions {
					states[a.Key] = a.State
				}
				want := map[string]model.State{"k" + id: model.StatePending, "n" + id: model.StateSuperseded, "r" + id: model.StatePending}
				if !maps.Equal(states, want) {
					t.Fatalf("%s's actions: %v, want %v", id, states, want)
				}
			}
		})
	}
}
