package ledger_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/watchdogd/watchdogd/internal/model"
)

// clearedMigration is the version of the migration that added the
// cleared code: the one before it is where an older watchdogd left the
// ledger.
func clearedMigration(t *testing.T) int {
	t.Helper()
	files, err := fs.Glob(os.DirFS("migrations"), "*_episode_cleared.sql")
	if err != nil || len(files) != 1 {
		t.Fatalf("the cleared migration: %v %v", files, err)
	}
	var v int
	if _, err := fmt.Sscanf(files[0], "%05d_", &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestClearedMapsOlderRows: episodes an older watchdogd resolved, with
// their reason in words only, get the code of their words after the
// migration — every words it ever wrote, a click's with its user — and
// other when their words are none of those; an open episode has none.
// None of them is taken for the duration histogram (they resolved before
// it counted), and the first resolve after is.
func TestClearedMapsOlderRows(t *testing.T) {
	ctx := context.Background()
	older := []struct {
		words string
		want  model.Cleared
	}{
		{"resolved from Slack by U0123", model.ClearedFromSlack},
		{"something a test wrote", model.ClearedOther},
		{"", model.ClearedOther},
	}
	for _, c := range model.ClearedCodes {
		if c != model.ClearedFromSlack && c != model.ClearedOther {
			older = append(older, struct {
				words string
				want  model.Cleared
			}{c.Words(), c})
		}
	}
	for _, d := range dialects[:2] {
		t.Run(d.name, func(t *testing.T) {
			url := d.url(t)
			db, dialect := rawLedger(t, url)
			defer func() { _ = db.Close() }()
			old, err := goose.NewProvider(dialect, db, migrations(t, clearedMigration(t)-1), goose.WithDisableGlobalRegistry(true))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := old.Up(ctx); err != nil {
				t.Fatal(err)
			}
			insert := rebind(dialect, `INSERT INTO episodes (id, identity, kind, session_id, task_id, workspace_id, task_title,
			  since_us, opened_us, last_seen_us, resolved_us, resolution, finding) VALUES (?, ?, 'stalled_turn', 's1', 't1', 'ws', 'Fix', ?, ?, ?, ?, ?, '{}')`)
			for i, row := range older {
				id := fmt.Sprintf("old-%02d", i)
				if _, err := db.ExecContext(ctx, insert, id, "x|"+id, t0.UnixMicro(), t0.UnixMicro(), t0.UnixMicro(), t0.UnixMicro(), row.words); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.ExecContext(ctx, insert, "open", "x|open", t0.UnixMicro(), t0.UnixMicro(), t0.UnixMicro(), nil, ""); err != nil {
				t.Fatal(err)
			}

			s := open(t, url) // migrates to this build's newest
			for i, row := range older {
				e, err := s.Episode(ctx, fmt.Sprintf("old-%02d", i))
				if err != nil || e.Cleared != row.want || e.Resolution != row.words {
					t.Errorf("%q: %q (%q), want %q: %v", row.words, e.Cleared, e.Resolution, row.want, err)
				}
			}
			if e, err := s.Episode(ctx, "open"); err != nil || e.Cleared != "" {
				t.Errorf("the open episode: %q %v", e.Cleared, err)
			}
			if got, err := s.TakeResolved(ctx, "a", 100); err != nil || len(got) != 0 {
				t.Fatalf("older resolves taken: %d %v", len(got), err)
			}
			if err := resolveAll(s, t0, model.Because(model.ClearedTurnCompleted), "open"); err != nil {
				t.Fatal(err)
			}
			if got, err := s.TakeResolved(ctx, "a", 100); err != nil || len(got) != 1 || got[0].Cleared != model.ClearedTurnCompleted {
				t.Fatalf("the first resolve after: %+v %v", got, err)
			}
		})
	}
}
