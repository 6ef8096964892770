package ledger_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx"

	"github.com/watchdogd/watchdogd/internal/ledger"
)

// newestMigration is the newest schema version the binary knows.
func newestMigration(t *testing.T) int64 {
	t.Helper()
	v, err := ledger.Newest()
	if err != nil || v < 3 {
		t.Fatalf("newest migration %d: %v", v, err)
	}
	return v
}

// markMigrated records version as applied in a ledger's goose table, as
// a newer watchdogd's migration would.
func markMigrated(t testing.TB, url string, version int64) {
	t.Helper()
	driver, dsn, table := "pgx", url, "watchdogd.goose_db_version"
	if path, ok := strings.CutPrefix(url, "sqlite://"); ok {
		driver, dsn, table = "sqlite", path, "goose_db_version"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if _, err := db.Exec(fmt.Sprintf("INSERT INTO %s (version_id, is_applied) VALUES (%d, true)", table, version)); err != nil {
		t.Fatal(err)
	}
}

// TestNewerLedgerRefused: a ledger migrated past the newest migration this
// build embeds is refused at open, by the daemon and by the operator
// commands alike, naming both versions (goose alone finds nothing to apply
// and opens it); one at this build's version opens.
func TestNewerLedgerRefused(t *testing.T) {
	newest := newestMigration(t)
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			url := d.url(t)
			s, err := ledger.Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			_ = s.Close()
			markMigrated(t, url, newest+1)
			want := fmt.Sprintf("its schema is at version %d, written by a newer watchdogd; this one knows versions up to %d", newest+1, newest)
			for name, open := range map[string]func(context.Context, string) (*ledger.Store, error){"Open": ledger.Open, "OpenExisting": ledger.OpenExisting} {
				s, err := open(context.Background(), url)
				if err == nil {
					_ = s.Close()
				}
				if !errors.Is(err, ledger.ErrNewerSchema) || !strings.Contains(err.Error(), want) {
					t.Errorf("%s of a newer ledger: %v, want %q", name, err, want)
				}
			}
		})
	}
}
