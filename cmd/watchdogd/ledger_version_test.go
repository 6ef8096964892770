package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx"

	"github.com/watchdogd/watchdogd/internal/ledger"
)

// TestNewerLedgerRefusedByTheBinary: after a rollback, the older binary
// refuses a ledger a newer one migrated (here: the version after this
// build's newest recorded as applied), in `run --once`, in the daemon's cycles
// and in the operator commands, naming both versions; it neither runs on
// the unknown schema nor changes it. On SQLite and on PostgreSQL.
func TestNewerLedgerRefusedByTheBinary(t *testing.T) {
	newest := newestMigration(t)
	pgLedger, err := pg.NewDatabase(context.Background(), "ledger")
	if err != nil {
		t.Fatal(err)
	}
	for _, state := range []string{"sqlite", pgLedger} {
		name := "sqlite"
		if state != "sqlite" {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) {
			extra, base := daemonConfig(t, "")
			e := newEnv(t, world(time.Now()), state, extra)
			e.once()
			posts := len(e.slack.Messages())
			driver, dsn, table := "pgx", e.state, "watchdogd.goose_db_version"
			if path, ok := strings.CutPrefix(e.state, "sqlite://"); ok {
				driver, dsn, table = "sqlite", path, "goose_db_version"
			}
			db, err := sql.Open(driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = db.Close() }()
			if _, err := db.Exec("INSERT INTO "+table+" (version_id, is_applied) VALUES ($1, true)", newest+1); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("its schema is at version %d, written by a newer watchdogd; this one knows versions up to %d", newest+1, newest)
			for _, args := range [][]string{{"run", "--once", "--config", e.cfg}, {"episodes", "list", "--config", e.cfg}} {
				r := watchdogd(t, e.environ(), args...)
				if r.code != 1 || !strings.Contains(r.stderr, want) {
					t.Errorf("%v: exit %d, stderr %q; want 1 and %q", args, r.code, r.stderr, want)
				}
			}
			d := e.startDaemon(base)
			waitFor(t, 20*time.Second, "a failed cycle naming both versions", func() bool {
				return len(logLines(d.out.String(), want)) > 0
			})
			if code, body := d.get("/readyz"); code != 503 || !strings.Contains(body, want) {
				t.Errorf("/readyz: %d %q", code, body)
			}
			d.terminate(t)
			if n := len(e.slack.Messages()); n != posts {
				t.Errorf("%d posts after the refusal, %d before", n, posts)
			}
			var version int64
			if err := db.QueryRow("SELECT max(version_id) FROM " + table).Scan(&version); err != nil || version != newest+1 {
				t.Errorf("the ledger's version is now %d (%v)", version, err)
			}
		})
	}
}

// newestMigration is the newest schema version the binary knows.
func newestMigration(t *testing.T) int64 {
	t.Helper()
	v, err := ledger.Newest()
	if err != nil || v < 3 {
		t.Fatalf("newest migration %d: %v", v, err)
	}
	return v
}
