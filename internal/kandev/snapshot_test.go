package kandev_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
)

func snapshot(t *testing.T, url string, opts kandev.Options) *model.Snapshot {
	t.Helper()
	ctx := context.Background()
	r, err := kandev.Open(ctx, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	snap, err := r.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestFixtureThroughSnapshot loads every shared fixture case as its own
// session and checks the real snapshot statement's current turn and kandev's
// view on both dialects.
func TestFixtureThroughSnapshot(t *testing.T) {
	cases, err := kandevdb.LoadResolutionCases("../../testdata/current_turn_resolution.json")
	if err != nil {
		t.Fatal(err)
	}
	// On PostgreSQL, a malformed metadata value sends the whole snapshot
	// down the fallback path; the cases without one exercise the fast path.
	all, wellFormed := kandevdb.Dataset{}, kandevdb.Dataset{}
	for i, c := range cases {
		ds := c.Dataset(fmt.Sprintf("c%03d-", i))
		all.Append(ds)
		if !hasMalformed(ds) {
			wellFormed.Append(ds)
		}
	}
	for _, dc := range dialects {
		for _, set := range []struct {
			name         string
			ds           kandevdb.Dataset
			wantFallback bool
		}{{"all", all, dc.name == "postgres"}, {"well-formed", wellFormed, false}} {
			t.Run(dc.name+"/"+set.name, func(t *testing.T) {
				db := load(t, dc, set.ds, kandevdb.Options{})
				snap := snapshot(t, db.URL(), kandev.Options{})
				if snap.Fallback != set.wantFallback {
					t.Fatalf("fallback = %v, want %v", snap.Fallback, set.wantFallback)
				}
				checkFixture(t, cases, snap, len(set.ds.Sessions))
			})
		}
	}
}

func hasMalformed(ds kandevdb.Dataset) bool {
	for _, tu := range ds.Turns {
		if tu.Metadata != nil && authority.ParseMetadata(authority.Postgres, tu.Metadata).Kind == authority.Malformed {
			return true
		}
	}
	return false
}

func checkFixture(t *testing.T, cases []kandevdb.ResolutionCase, snap *model.Snapshot, sessions int) {
	t.Helper()
	byID := map[string]model.Session{}
	for _, s := range snap.Sessions {
		byID[s.ID] = s
	}
	if len(byID) != sessions {
		t.Fatalf("%d sessions, want %d", len(byID), sessions)
	}
	for i, c := range cases {
		prefix := fmt.Sprintf("c%03d-", i)
		s, ok := byID[prefix+"session"]
		if !ok {
			continue
		}
		got := ""
		if s.Current != nil {
			got = strings.TrimPrefix(s.Current.ID, prefix)
		}
		want := ""
		if c.ExpectedCurrentTurnID != nil {
			want = *c.ExpectedCurrentTurnID
		}
		if got != want {
			t.Errorf("%s: current turn %q, want %q", c.Name, got, want)
		}
		if c.ExpectedKandev.Set {
			want := ""
			if c.ExpectedKandev.ID != nil {
				want = *c.ExpectedKandev.ID
			}
			if got := strings.TrimPrefix(s.KandevTurnID, prefix); got != want {
				t.Errorf("%s: kandev's turn %q, want %q", c.Name, got, want)
			}
		}
	}
}
