package main

import (
	"context"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

// kandevDialects are the dialects a test's kandev rows are read on.
var kandevDialects = []string{"sqlite", "postgres"}

// kandevOn is where a test's kandev rows live: the env's own SQLite file,
// or a PostgreSQL database holding the same rows, which the binary reads
// through --database-url (args). exec runs an update there, written for
// its dialect; an argument that is a time.Time is written as kandev
// stores it (asStored).
type kandevOn struct {
	name string
	args []string
	exec func(sqlite, postgres string, args ...any)
}

// newEnvOn is newEnv with kandev's rows on dialect.
func newEnvOn(t *testing.T, dialect string, ds kandevdb.Dataset, extra string) (*env, kandevOn) {
	t.Helper()
	e := newEnv(t, ds, "sqlite", extra)
	k := kandevOn{name: dialect, exec: func(q, _ string, args ...any) {
		t.Helper()
		if _, err := e.kandev.DB().Exec(q, asStored("sqlite", args)...); err != nil {
			t.Fatalf("sqlite: %s: %v", q, err)
		}
	}}
	if dialect == "sqlite" {
		return e, k
	}
	ctx := context.Background()
	dsn, err := pg.NewDatabase(ctx, "kandev")
	if err != nil {
		t.Fatal(err)
	}
	pgdb, err := kandevdb.CreatePostgres(ctx, dsn, kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pgdb.Close() })
	if err := pgdb.Write(ctx, ds); err != nil {
		t.Fatal(err)
	}
	k.args = []string{"--database-url", dsn}
	k.exec = func(_, q string, args ...any) {
		t.Helper()
		if _, err := pgdb.Conn().Exec(ctx, q, asStored("postgres", args)...); err != nil {
			t.Fatalf("postgres: %s: %v", q, err)
		}
	}
	return e, k
}

// asStored gives time arguments as kandev stores them: text in its main
// shape on SQLite, a UTC wall-clock timestamp on PostgreSQL.
func asStored(dialect string, args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a
		if t, ok := a.(time.Time); ok {
			out[i] = t.UTC()
			if dialect == "sqlite" {
				out[i] = kandevdb.TS(t)
			}
		}
	}
	return out
}
