package authority_test

import (
	"testing"

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

const fixture = "../../testdata/current_turn_resolution.json"

func goTurns(d authority.Dialect, c kandevdb.ResolutionCase) []authority.Turn {
	out := make([]authority.Turn, len(c.Turns))
	for i, t := range c.Turns {
		started := t.StartedAt
		out[i] = authority.Turn{
			ID:          t.ID,
			StartedAt:   authority.StampOf(d, &started),
			CreatedAt:   authority.StampOf(d, t.CreatedAt),
			CompletedAt: authority.StampOf(d, t.CompletedAt),
			Metadata:    t.Metadata,
			HasMessages: t.Messages > 0,
		}
	}
	return out
}

func idAt(turns []authority.Turn, i int) *string {
	if i < 0 {
		return nil
	}
	return &turns[i].ID
}

func show(p *string) string {
	if p == nil {
		return "<none>"
	}
	return *p
}

// TestFixtureGoRule runs every shared case through the Go rule in both dialect
// modes: kandev's main timestamp shape orders identically either way.
func TestFixtureGoRule(t *testing.T) {
	cases, err := kandevdb.LoadResolutionCases(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 30 {
		t.Fatalf("fixture has %d cases, want at least 30", len(cases))
	}
	for _, d := range []authority.Dialect{authority.SQLite, authority.Postgres} {
		for _, c := range cases {
			turns := goTurns(d, c)
			res := authority.Resolve(d, turns)
			if got := idAt(turns, res.Current); show(got) != show(c.ExpectedCurrentTurnID) {
				t.Errorf("%s / %s: current turn %s, want %s", d, c.Name, show(got), show(c.ExpectedCurrentTurnID))
			}
			if c.ExpectedKandev.Set {
				if got := idAt(turns, res.Kandev); show(got) != show(c.ExpectedKandev.ID) {
					t.Errorf("%s / %s: kandev's turn %s, want %s", d, c.Name, show(got), show(c.ExpectedKandev.ID))
				}
			}
		}
	}
}

// TestTwoOpenTurnsOrder pins D2: two open turns resolve by keys 2–4, and
// Open lists them oldest first.
func TestTwoOpenTurnsOrder(t *testing.T) {
	s := func(v string) authority.Stamp { return authority.Stamp{Text: v, Valid: true} }
	turns := []authority.Turn{
		{ID: "b", StartedAt: s("2026-01-01 10:00:00+00:00")},
		{ID: "a", StartedAt: s("2026-01-01 09:00:00+00:00")},
		{ID: "c", StartedAt: s("2026-01-01 11:00:00+00:00"), CompletedAt: s("2026-01-01 11:00:00+00:00")},
	}
	res := authority.Resolve(authority.SQLite, turns)
	if turns[res.Current].ID != "b" {
		t.Fatalf("current %s, want b", turns[res.Current].ID)
	}
	if len(res.Open) != 2 || turns[res.Open[0]].ID != "a" || turns[res.Open[1]].ID != "b" {
		t.Fatalf("open turns %v, want a then b", res.Open)
	}
	if turns[res.Kandev].ID != "c" {
		t.Fatalf("kandev's view %s, want c (no open-first key)", turns[res.Kandev].ID)
	}
}

// TestSQLiteComparesStoredText pins D13 on SQLite: mixed shapes order as
// text, which is not chronological ('… 10:00:00+00:00' < '…T09:00:00Z'),
// exactly as kandev's own SQL orders them; PostgreSQL orders instants.
func TestSQLiteComparesStoredText(t *testing.T) {
	space, tee := "2026-08-22 10:00:00+00:00", "2026-08-22T09:00:00Z"
	turns := func(d authority.Dialect) []authority.Turn {
		return []authority.Turn{
			{ID: "space-10h", StartedAt: authority.StampOf(d, &space), CompletedAt: authority.StampOf(d, &space)},
			{ID: "tee-09h", StartedAt: authority.StampOf(d, &tee), CompletedAt: authority.StampOf(d, &tee)},
		}
	}
	ts := turns(authority.SQLite)
	if got := ts[authority.Resolve(authority.SQLite, ts).Current].ID; got != "tee-09h" {
		t.Errorf("SQLite mode picked %s, want tee-09h (text order)", got)
	}
	tp := turns(authority.Postgres)
	if got := tp[authority.Resolve(authority.Postgres, tp).Current].ID; got != "space-10h" {
		t.Errorf("PostgreSQL mode picked %s, want space-10h (instant order)", got)
	}
}
