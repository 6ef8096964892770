package ledger_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// TestPeekForLoadsLeftOutActions: the actions a decision names are added to
// what the ledger loads — a stored one left out, in its place by creation;
// one already loaded, not twice; one not stored, nothing — on every dialect,
// PgBouncer included (the keys travel as one array parameter).
func TestPeekForLoadsLeftOutActions(t *testing.T) {
	ctx := context.Background()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			s := open(t, d.url(t))
			// A first post, then two replies of the repeated step: the
			// older reply is neither the newest of its ladder nor the
			// last sent, so it is left out once all three are delivered.
			first := action("k-first", "ep1", "d")
			old := action("k-old", "ep1", "d")
			old.Seq, old.ParentKey, old.CreatedAt = "step/x/1/0", first.Key, t0.Add(time.Minute)
			newest := action("k-newest", "ep1", "d")
			newest.Seq, newest.ParentKey, newest.CreatedAt = "step/x/1/1", first.Key, t0.Add(2*time.Minute)
			if _, _, err := s.Decide(ctx, func(model.Ledger) (model.Plan, error) {
				return model.Plan{Now: t0, Open: []model.Episode{newEpisode("ep1")}, Actions: []model.Action{first, old, newest}}, nil
			}); err != nil {
				t.Fatal(err)
			}
			for i, a := range []model.Action{first, old, newest} {
				at := t0.Add(time.Duration(3+i) * time.Minute)
				if _, ok, err := s.Claim(ctx, a.Key, "test", "tok-"+a.Key, at, time.Minute); err != nil || !ok {
					t.Fatalf("claim %s: %v %v", a.Key, ok, err)
				}
				if err := s.Settle(ctx, a.Key, "tok-"+a.Key, model.Outcome{State: model.StateDelivered, ResultChannel: "C1", ResultTS: "1.0"}, at); err != nil {
					t.Fatal(err)
				}
			}
			keys := func(st model.Ledger) []string {
				var out []string
				for _, a := range st.Open[0].Actions {
					out = append(out, a.Key)
				}
				return out
			}
			plain, err := s.Peek(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := keys(plain); !slices.Equal(got, []string{first.Key, newest.Key}) {
				t.Fatalf("loaded %v: the older reply should be left out", got)
			}
			st, err := s.PeekFor(ctx, func(model.Ledger) []string { return []string{newest.Key, "k-none", old.Key} })
			if err != nil {
				t.Fatal(err)
			}
			if got := keys(st); !slices.Equal(got, []string{first.Key, old.Key, newest.Key}) {
				t.Fatalf("with the wanted keys: %v", got)
			}
			if got := st.Open[0].Actions[1]; got.State != model.StateDelivered || got.ParentKey != first.Key || got.Body != "" {
				t.Fatalf("the looked-up action: %+v", got)
			}
		})
	}
}
