package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/pgtest"
)

var pg *pgtest.Server

func TestMain(m *testing.M) {
	os.Exit(pgtest.RunTests(m, func(s *pgtest.Server) { pg = s }))
}

type dialect struct {
	name string
	url  func(t testing.TB) string
}

var dialects = []dialect{
	{"sqlite", func(t testing.TB) string { return "sqlite://" + filepath.Join(t.TempDir(), "state.db") }},
	{"postgres", func(t testing.TB) string {
		u, err := pg.NewDatabase(context.Background(), "ledger")
		if err != nil {
			t.Fatal(err)
		}
		return u
	}},
	// PgBouncer in session pooling, with its defaults (it refuses
	// search_path at startup): a deployment's way to its PostgreSQL.
	{"postgres-pgbouncer", func(t testing.TB) string {
		u, err := pg.NewDatabase(context.Background(), "ledger")
		if err != nil {
			t.Fatal(err)
		}
		b, err := sessionBouncer()
		if err != nil {
			t.Fatal(err)
		}
		if u, err = b.Through(u); err != nil {
			t.Fatal(err)
		}
		return u
	}},
}

// sessionBouncer starts, once, PgBouncer in session pooling in front of
// the test server, stopped with it.
var sessionBouncer = sync.OnceValues(func() (*pgtest.Bouncer, error) {
	b, err := pg.StartBouncer("session", 100)
	if err == nil {
		pg.OnClose(b.Close)
	}
	return b, err
})

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func open(t testing.TB, url string) *ledger.Store {
	t.Helper()
	s, err := ledger.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newEpisode(id string) model.Episode {
	return model.Episode{ID: id, Identity: "stalled_turn|s1|turn-1|", Kind: "stalled_turn", SessionID: "s1", TaskID: "t1",
		WorkspaceID: "ws", TurnID: "turn-1", TaskTitle: "Fix", Since: t0.Add(-time.Hour), OpenedAt: t0, LastSeen: t0, Finding: "{}"}
}

func action(key, episode, digest string) model.Action {
	return model.Action{Key: key, EpisodeID: episode, Seq: "step/x/0/0", Kind: model.ActionSlack, Channel: "C1", Digest: digest,
		Body: `{"text":"hi"}`, CreatedAt: t0, NextAttempt: t0}
}

func TestDecideAndConflicts(t *testing.T) {
	ctx := context.Background()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			s := open(t, d.url(t))
			_, ap, err := s.Decide(ctx, func(st model.Ledger) (model.Plan, error) {
				if len(st.Open) != 0 {
					t.Fatalf("fresh ledger has %d open episodes", len(st.Open))
				}
				return model.Plan{Now: t0, Open: []model.Episode{newEpisode("ep1")}, Actions: []model.Action{action("k1", "ep1", "d1")}}, nil
			})
			if err != nil || ap.Inserted != 1 {
				t.Fatalf("apply: %v %+v", err, ap)
			}
			// Same key, same digest: nothing new. Another digest: one
			// counted conflict, counted once however often it recurs.
			for i, want := range []int{0, 1, 0} {
				digest := "d1"
				if i > 0 {
					digest = "d2"
				}
				_, ap, err = s.Decide(ctx, func(st model.Ledger) (model.Plan, error) {
					if len(st.Open) != 1 || len(st.Open[0].Actions) != 1 {
						t.Fatalf("state %+v", st)
					}
					return model.Plan{Now: t0, Actions: []model.Action{action("k1", "ep1", digest)}}, nil
				})
				if err != nil || ap.Inserted != 0 || len(ap.Conflicts) != want {
					t.Fatalf("round %d: %v %+v", i, err, ap)
				}
			}
			a, err := s.Action(ctx, "k1")
			if err != nil || a.Digest != "d1" || a.Conflicts != 1 || a.State != model.StatePending {
				t.Fatalf("stored action %+v %v (the first decision stays authoritative)", a, err)
			}
			// A second open episode with the same identity is refused.
			_, _, err = s.Decide(ctx, func(model.Ledger) (model.Plan, error) {
				return model.Plan{Now: t0, Open: []model.Episode{newEpisode("ep2")}}, nil
			})
			if err == nil {
				t.Fatal("two open episodes with one identity")
			}
			// After a resolve, the identity may open again (a new episode).
			_, _, err = s.Decide(ctx, func(model.Ledger) (model.Plan, error) {
				return model.Plan{Now: t0, Resolve: []model.Resolve{{ID: "ep1", At: t0, Reason: "answered"}}, Supersede: []string{"k1"}}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = s.Decide(ctx, func(st model.Ledger) (model.Plan, error) {
				if len(st.Open) != 0 {
					t.Fatalf("resolved episode still open")
				}
				return model.Plan{Now: t0, Open: []model.Episode{newEpisode("ep2")}}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if a, _ := s.Action(ctx, "k1"); a.State != model.StateSuperseded {
				t.Fatalf("superseded action is %s", a.State)
			}
		})
	}
}

// TestClaimIsExclusive: many concurrent claimers, exactly one wins; a stale
// claim is taken over (flagged), and the first holder's settle then fails.
func TestClaimIsExclusive(t *testing.T) {
	ctx := context.Background()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			url := d.url(t)
			s := open(t, url)
			if _, _, err := s.Decide(ctx, func(model.Ledger) (model.Plan, error) {
				return model.Plan{Now: t0, Open: []model.Episode{newEpisode("ep1")}, Actions: []model.Action{action("k1", "ep1", "d1")}}, nil
			}); err != nil {
				t.Fatal(err)
			}
			// Claimers on separate connections (as separate processes).
			var wins atomic.Int32
			var wg sync.WaitGroup
			for i := 0; i < 8; i++ {
				other := open(t, url)
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					_, ok, err := other.Claim(ctx, "k1", fmt.Sprint("p", i), fmt.Sprint("tok", i), t0, time.Minute)
					if err != nil {
						t.Error(err)
					}
					if ok {
						wins.Add(1)
					}
				}(i)
			}
			wg.Wait()
			if wins.Load() != 1 {
				t.Fatalf("%d claimers won", wins.Load())
			}
			a, _ := s.Action(ctx, "k1")
			// Not stale yet: no takeover.
			if _, ok, _ := s.Claim(ctx, "k1", "late", "tok-late", t0.Add(30*time.Second), time.Minute); ok {
				t.Fatal("a fresh claim was taken over")
			}
			c, ok, err := s.Claim(ctx, "k1", "rescuer", "tok-r", t0.Add(2*time.Minute), time.Minute)
			if err != nil || !ok || !c.Takeover {
				t.Fatalf("stale claim takeover: ok=%v takeover=%v err=%v", ok, c.Takeover, err)
			}
			if err := s.Settle(ctx, "k1", a.ClaimToken, model.Outcome{State: model.StateDelivered}, t0); !errors.Is(err, ledger.ErrLostClaim) {
				t.Fatalf("the first holder settled after a takeover: %v", err)
			}
			if err := s.Settle(ctx, "k1", "tok-r", model.Outcome{State: model.StateDelivered, ResultChannel: "C1", ResultTS: "1.2"}, t0); err != nil {
				t.Fatal(err)
			}
			if due, _ := s.DueActions(ctx, t0.Add(time.Hour), time.Minute); len(due) != 0 {
				t.Fatalf("a delivered action is due: %+v", due)
			}
		})
	}
}

// TestRetryBackoff: a retryable outcome returns the action to pending with
// a next attempt; it is not due before it.
func TestRetryBackoff(t *testing.T) {
	ctx := context.Background()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			s := open(t, d.url(t))
			if _, _, err := s.Decide(ctx, func(model.Ledger) (model.Plan, error) {
				return model.Plan{Now: t0, Open: []model.Episode{newEpisode("ep1")}, Actions: []model.Action{action("k1", "ep1", "d1")}}, nil
			}); err != nil {
				t.Fatal(err)
			}
			if _, ok, err := s.Claim(ctx, "k1", "p", "tok", t0, time.Minute); !ok || err != nil {
				t.Fatal("claim", err)
			}
			if err := s.Settle(ctx, "k1", "tok", model.Outcome{State: model.StatePending, NextAttempt: t0.Add(30 * time.Second), Error: "HTTP 503", Uncertain: true}, t0); err != nil {
				t.Fatal(err)
			}
			if due, _ := s.DueActions(ctx, t0.Add(29*time.Second), time.Minute); len(due) != 0 {
				t.Fatal("due before its next attempt")
			}
			due, err := s.DueActions(ctx, t0.Add(30*time.Second), time.Minute)
			if err != nil || len(due) != 1 || !due[0].Uncertain || due[0].Attempts != 1 || due[0].Episode.ID != "ep1" {
				t.Fatalf("due %+v %v", due, err)
			}
			// Channel gates only ever lengthen.
			if err := s.CloseGate(ctx, "C1", t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			if err := s.CloseGate(ctx, "C1", t0.Add(time.Second)); err != nil {
				t.Fatal(err)
			}
			if g, _ := s.GateUntil(ctx, "C1"); !g.Equal(t0.Add(time.Minute)) {
				t.Fatalf("gate %v", g)
			}
		})
	}
}

// TestConcurrentMigrations: processes starting at once on a fresh ledger all
// come up.
func TestConcurrentMigrations(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			url := d.url(t)
			var wg sync.WaitGroup
			errs := make(chan error, 6)
			for i := 0; i < 6; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s, err := ledger.Open(context.Background(), url)
					if err == nil {
						err = s.Close()
					}
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestOpenExisting: the operator commands' open refuses a ledger no daemon
// has created, and creates nothing (no file, no schema); once Open has
// created it, it opens.
func TestOpenExisting(t *testing.T) {
	ctx := context.Background()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			url := d.url(t)
			for range 2 { // the first refusal left nothing behind
				if _, err := ledger.OpenExisting(ctx, url); !errors.Is(err, ledger.ErrNoLedger) {
					t.Fatalf("OpenExisting of a ledger never created: %v, want ErrNoLedger", err)
				}
			}
			_ = open(t, url)
			s, err := ledger.OpenExisting(ctx, url)
			if err != nil {
				t.Fatalf("OpenExisting after Open: %v", err)
			}
			_ = s.Close()
		})
	}
}

// TestLease: one holder at a time; renewals keep the term; an expired lease
// changes hands with a new term; a released one is free at once.
func TestLease(t *testing.T) {
	ctx := context.Background()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			url := d.url(t)
			a, b := open(t, url), open(t, url)
			la, ok, err := a.AcquireLease(ctx, "leader", "a", 400*time.Millisecond)
			if err != nil || !ok || la.Term != 1 {
				t.Fatalf("a: %+v %v %v", la, ok, err)
			}
			if lb, ok, err := b.AcquireLease(ctx, "leader", "b", 400*time.Millisecond); err != nil || ok || lb.Holder != "a" || !lb.Current() {
				t.Fatalf("b took a current lease: %+v %v %v", lb, ok, err)
			}
			if la, ok, _ = a.AcquireLease(ctx, "leader", "a", 400*time.Millisecond); !ok || la.Term != 1 {
				t.Fatalf("renewal: %+v %v", la, ok)
			}
			time.Sleep(500 * time.Millisecond)
			lb, ok, err := b.AcquireLease(ctx, "leader", "b", 400*time.Millisecond)
			if err != nil || !ok || lb.Term != 2 {
				t.Fatalf("b after expiry: %+v %v %v", lb, ok, err)
			}
			if _, ok, _ := a.AcquireLease(ctx, "leader", "a", 400*time.Millisecond); ok {
				t.Fatal("a renewed a lease b holds")
			}
			if err := b.ReleaseLease(ctx, "leader", "b"); err != nil {
				t.Fatal(err)
			}
			if la, ok, _ := a.AcquireLease(ctx, "leader", "a", 400*time.Millisecond); !ok || la.Term != 3 {
				t.Fatalf("after release: %+v %v", la, ok)
			}
		})
	}
}

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
				return model.Plan{Now: t0, Resolve: []model.Resolve{{ID: "settled", At: t0, Reason: "completed"},
					{ID: "pending", At: t0, Reason: "completed"}, {ID: "claimed", At: t0, Reason: "completed"},
					{ID: "recent", At: t0.Add(40 * day), Reason: "completed"}}}, nil
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
