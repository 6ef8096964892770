package bench

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/pgtest"
)

// TestGrownIsACopy: history2x times the scan on the dataset and on a copy
// with the terminal history doubled. The copy must hold the dataset and
// the added sessions, and the dataset must be left as it was, or the two
// scans would read the same rows and the ratio would prove nothing. Closing
// either removes it: at the large size each is gigabytes.
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
			if got := sessionsIn(t, c.db); got != c.want {
				t.Errorf("%s: %s has %d sessions, want %d", dialect, c.db.url, got, c.want)
			}
		}
		grown.close()
		db.close()
		for _, gone := range []*database{db, grown} {
			if stillThere(t, srv, gone) {
				t.Errorf("%s: %s is still there after close", dialect, gone.url)
			}
		}
	}
}

// stillThere: whether a closed dataset is still on disk (a file on SQLite,
// a database on PostgreSQL).
func stillThere(t *testing.T, srv *pgtest.Server, db *database) bool {
	t.Helper()
	if db.dialect == "sqlite" {
		_, err := os.Stat(strings.TrimPrefix(db.url, "sqlite://"))
		return err == nil
	}
	cfg, err := pgx.ParseConfig(db.url)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(context.Background(), srv.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1", cfg.Database).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

func sessionsIn(t *testing.T, db *database) int {
	t.Helper()
	n, err := countSessions(context.Background(), db)
	if err != nil {
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

// TestHistoryRefusesAnUngrownCopy: history2x compares the scan on the
// dataset with the scan on a copy whose terminal history is doubled. If the
// copy came back without the added sessions (or as the dataset itself), the
// two scans would read the same rows and the ratio would come out near 1
// whatever the statements do, so history must fail instead of reporting it.
func TestHistoryRefusesAnUngrownCopy(t *testing.T) {
	ctx := context.Background()
	cfg := Config{CacheDir: t.TempDir(), Now: time.Now(), Runs: 1, Log: io.Discard}
	size := Size{"tiny", 40, 0.5, 3, 2}
	for _, c := range []struct {
		name  string
		same  bool
		fails bool
	}{
		{"grown copy", false, false},
		{"the dataset itself", true, true},
	} {
		db, err := cfg.load(ctx, "sqlite", size)
		if err != nil {
			t.Fatal(err)
		}
		if c.same {
			db.grown = func(context.Context, kandevdb.Spec) (*database, error) {
				return &database{dialect: db.dialect, url: db.url, close: func() {}}, nil
			}
		}
		r, err := kandev.Open(ctx, db.url, kandev.Options{})
		if err != nil {
			t.Fatal(err)
		}
		res := Result{}
		res.Active, err = scanOnce(ctx, r)
		_ = r.Close()
		if err != nil {
			t.Fatal(err)
		}
		err = cfg.history(ctx, db, size, &res)
		if (err != nil) != c.fails {
			t.Errorf("%s: history returned %v", c.name, err)
		}
		if !c.fails && (res.ScanHistory1 <= 0 || res.ScanHistory2 <= 0) {
			t.Errorf("%s: history did not time both scans: %v, %v", c.name, res.ScanHistory1, res.ScanHistory2)
		}
		db.close()
	}
}
