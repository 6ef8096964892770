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
				return model.Plan{Now: t0, Resolve: []model.Resolve{{ID: "ep1", At: t0, Reason: model.Because(model.ClearedAnswered)}}, Supersede: []string{"k1"}}, nil
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
