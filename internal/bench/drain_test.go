package bench

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/watchdogd/watchdogd/internal/pgtest"
)

// rawDBs opens the benchmark's kind of connection to an empty SQLite file
// and to an empty PostgreSQL database.
func rawDBs(t *testing.T) map[string]*sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	dsn, err := srv.NewDatabase(context.Background(), "drain")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*sql.DB{}
	for dialect, url := range map[string]string{"sqlite": "sqlite://" + path, "postgres": dsn} {
		db, err := openRaw(&database{dialect: dialect, url: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		out[dialect] = db
	}
	return out
}

// TestDrainReportsAFailureAfterRows: a statement that fails after sending
// thousands of rows is an error, not a shorter run that succeeded. Both
// dialects stream the rows before the failing one, so the error comes from
// Next, which Close alone would drop.
func TestDrainReportsAFailureAfterRows(t *testing.T) {
	failing := map[string]string{
		"sqlite": `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 5000)
SELECT CASE WHEN n <= 3000 THEN n ELSE json('{') END FROM g`,
		"postgres": `SELECT CASE WHEN n <= 3000 THEN n ELSE 1 / (n - n) END FROM generate_series(1, 5000) n`,
	}
	for dialect, db := range rawDBs(t) {
		ctx := context.Background()
		if err := drain(ctx, db, strings.ReplaceAll(failing[dialect], "n <= 3000", "true")); err != nil {
			t.Errorf("%s: the statement that does not fail: %v", dialect, err)
		}
		if err := drain(ctx, db, failing[dialect]); err == nil {
			t.Errorf("%s: drain returned no error for a statement that failed after 3000 rows", dialect)
		}
	}
}

// refusing is a writer that refuses the writes refuse picks, as a full
// disk would.
type refusing struct {
	refuse func(p []byte) bool
	buf    bytes.Buffer
}

func (f *refusing) Write(p []byte) (int, error) {
	if f.refuse != nil && f.refuse(p) {
		return 0, errors.New("no space left on device")
	}
	return f.buf.Write(p)
}

// TestPrintPlan: a plan is printed whole under its heading, and a plan
// that cannot be read or written whole is an error that names the
// statement.
func TestPrintPlan(t *testing.T) {
	ctx := context.Background()
	for dialect, db := range rawDBs(t) {
		const q = "SELECT count(*) FROM (SELECT 1 AS x UNION ALL SELECT 2) s WHERE x > 1"
		var ok refusing
		if err := printPlan(ctx, &ok, db, dialect, "sessions", q); err != nil {
			t.Errorf("%s: %v", dialect, err)
		}
		got := ok.buf.String()
		if !strings.HasPrefix(got, "\n### "+dialect+": sessions statement\n\n```\n") || !strings.HasSuffix(got, "\n```\n") ||
			strings.Count(got, "\n") < 6 {
			t.Errorf("%s: plan printed as\n%s", dialect, got)
		}
		for _, c := range []struct {
			what  string
			w     *refusing
			query string
			want  string
		}{
			{"the heading's write fails", &refusing{refuse: func([]byte) bool { return true }}, q, "write the messages statement's plan: no space left on device"},
			{"the closing fence's write fails", &refusing{refuse: func(p []byte) bool { return string(p) == "```\n" }}, q, "write the messages statement's plan"},
			{"the statement is refused", &refusing{}, "SELECT * FROM no_such_table", "explain messages: "},
		} {
			err := printPlan(ctx, c.w, db, dialect, "messages", c.query)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s, %s: got %v, want an error with %q", dialect, c.what, err, c.want)
			}
		}
	}
}
