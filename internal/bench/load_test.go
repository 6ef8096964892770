package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/pgtest"
)

// TestGrownIsACopy: history2x times the scan on the dataset and on a copy
// with the terminal history doubled. The copy must hold the dataset and
// the added sessions, and the dataset must be left as it was, or the two
// scans would read the same rows and the ratio would prove nothing.
func TestGrownIsACopy(t *testing.T) {
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	cfg := Config{CacheDir: t.TempDir(), PG: srv, Now: time.Now()}
	size := Size{"tiny", 40, 0.5, 3, 2}
	for _, dialect := range []string{"sqlite", "postgres"} {
		db, err := cfg.load(ctx, dialect, size)
		if err != nil {
			t.Fatal(err)
		}
		more := cfg.spec(size)
		more.Sessions, more.IDOffset, more.TerminalOnly = 25, size.Sessions, true
		grown, err := db.grown(ctx, more)
		if err != nil {
			t.Fatalf("%s: %v", dialect, err)
		}
		for _, c := range []struct {
			db   *database
			want int
		}{{db, 40}, {grown, 65}} {
			if got := countSessions(t, c.db); got != c.want {
				t.Errorf("%s: %s has %d sessions, want %d", dialect, c.db.url, got, c.want)
			}
		}
		grown.close()
		db.close()
	}
}

func countSessions(t *testing.T, db *database) int {
	t.Helper()
	raw, err := openRaw(db)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = raw.Close() }()
	var n int
	if err := raw.QueryRow("SELECT count(*) FROM task_sessions").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCacheKeepsOneDatasetPerSize: a dataset generated on a new day
// replaces the size's older files (each large one is gigabytes) and leaves
// the other sizes' alone.
func TestCacheKeepsOneDatasetPerSize(t *testing.T) {
	dir := t.TempDir()
	stale := []string{"tiny-v2-1.db", "tiny-v3-1.db", "tiny-v3-1.db-shm"}
	kept := []string{"tinier-v3-1.db", "other-v3-1.db"}
	for _, name := range append(stale, kept...) {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{CacheDir: dir, Now: time.Now()}
	db, err := cfg.load(context.Background(), "sqlite", Size{"tiny", 10, 0.5, 2, 2})
	if err != nil {
		t.Fatal(err)
	}
	db.close()
	for _, name := range stale {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s is still in the cache (%v)", name, err)
		}
	}
	for _, name := range kept {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "tiny-*.db")); len(files) != 1 {
		t.Errorf("tiny's datasets in the cache: %v, want today's only", files)
	}
}
