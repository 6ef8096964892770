package ledger_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
)

// TestEpisodeID: an episode is found by its id, or by any prefix of 8
// characters or more that only its id starts with; a prefix two ids start
// with names both, one too short or matching none is refused, on both
// databases, case as typed.
func TestEpisodeID(t *testing.T) {
	ctx := context.Background()
	ids := []string{"1a2b3c4d-0000-4000-8000-000000000001", "1a2b3c4d-0000-4000-8000-000000000002", "9f8e7d6c-5b4a-4000-8000-000000000003", "ep1"}
	for _, d := range dialects[:2] {
		t.Run(d.name, func(t *testing.T) {
			s := open(t, d.url(t))
			if _, _, err := s.Decide(ctx, func(model.Ledger) (model.Plan, error) {
				var eps []model.Episode
				for _, id := range ids {
					e := newEpisode(id)
					e.Identity += id // one open episode per identity
					eps = append(eps, e)
				}
				return model.Plan{Now: t0, Open: eps}, nil
			}); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				in, want, err string
			}{
				{in: ids[2], want: ids[2]},
				{in: "9f8e7d6c", want: ids[2]},
				{in: "9f8e7d6c-5b", want: ids[2]},
				{in: "ep1", want: "ep1"}, // whole, however short
				{in: "1a2b3c4d-0000-4000-8000-000000000002", want: ids[1]},
				{in: "1a2b3c4d", err: `episode "1a2b3c4d" is ambiguous: it starts 1a2b3c4d-0000-4000-8000-000000000001, 1a2b3c4d-0000-4000-8000-000000000002 (give more of the id)`},
				{in: "9f8e7d6", err: `episode "9f8e7d6": no such episode (give its whole id, or at least its first 8 characters)`},
				{in: "9F8E7D6C", err: `episode "9F8E7D6C": no such episode`},
				{in: "00000000", err: `episode "00000000": no such episode`},
				{in: "9f8e7d6%", err: `episode "9f8e7d6%": no such episode`},
			} {
				got, err := s.EpisodeID(ctx, c.in)
				if c.err != "" {
					if err == nil || err.Error() != c.err {
						t.Errorf("%s: %q %v, want error %q", c.in, got, err, c.err)
					}
					if strings.Contains(c.err, "no such") && !errors.Is(err, ledger.ErrNoEpisode) {
						t.Errorf("%s: %v is not ErrNoEpisode", c.in, err)
					}
					continue
				}
				if err != nil || got != c.want {
					t.Errorf("%s: %q %v, want %q", c.in, got, err, c.want)
				}
			}
		})
	}
}
