package authority_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/pgtest"
)

func startPostgres(t testing.TB) *kandevdb.Postgres {
	t.Helper()
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ctx := context.Background()
	dsn, err := srv.NewDatabase(ctx, "authority")
	if err != nil {
		t.Fatal(err)
	}
	db, err := kandevdb.CreatePostgres(ctx, dsn, kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// forPostgres rewrites what PostgreSQL's text type cannot hold — a NUL byte,
// invalid UTF-8; such metadata exists only on SQLite — to U+FFFD, so that
// every fuzz input still reaches PostgreSQL. (The JSON escape \u0000, which
// text holds and ::jsonb refuses, is kept.)
func forPostgres(ft []fuzzTurn) []fuzzTurn {
	out := make([]fuzzTurn, len(ft))
	for i, t := range ft {
		if t.meta != nil {
			m := strings.ToValidUTF8(strings.ReplaceAll(*t.meta, "\x00", "\uFFFD"), "\uFFFD")
			t.meta = &m
		}
		out[i] = t
	}
	return out
}

func postgresEval(t testing.TB, db *kandevdb.Postgres, ft []fuzzTurn) dbEval {
	ctx := context.Background()
	conn := db.Conn()
	if _, err := conn.Exec(ctx, "DELETE FROM task_session_turns; DELETE FROM task_session_messages"); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(ctx, toDataset(ft)); err != nil {
		t.Fatal(err)
	}
	cq, kq, fq := evalQueries(authority.Postgres)
	ev := dbEval{flags: map[string][3]bool{}, malformed: map[string]bool{}}
	class22 := func(err error) bool {
		var pgErr *pgconn.PgError
		return errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "22")
	}
	for _, tr := range ft {
		// Validity: does the ::jsonb cast accept the text at all?
		var isNull bool
		err := conn.QueryRow(ctx, "SELECT metadata::jsonb IS NULL FROM task_session_turns WHERE id = $1", tr.id).Scan(&isNull)
		switch {
		case err == nil:
		case class22(err):
			ev.malformed[tr.id] = true
		default:
			t.Fatal(err)
		}
		// Flags: a malformed value that passes the text test fails the
		// cast; the Go rule then reads it as no flags.
		var f [3]bool
		if err := conn.QueryRow(ctx, fq+"$1", tr.id).Scan(&f[0], &f[1], &f[2]); err != nil && !class22(err) {
			t.Fatal(err)
		}
		ev.flags[tr.id] = f
	}
	one := func(q string) (string, bool) {
		var id *string
		err := conn.QueryRow(ctx, q).Scan(&id)
		switch {
		case class22(err):
			return "", false
		case err != nil && !errors.Is(err, pgx.ErrNoRows):
			t.Fatalf("%v\n%s", err, q)
		}
		if id == nil {
			return "", true
		}
		return *id, true
	}
	var okC, okK bool
	ev.current, okC = one(cq)
	ev.kandev, okK = one(kq)
	if !okC || !okK {
		// The fast statement fails here; the snapshot resolves such a
		// session with the Go rule on the text (the fallback path).
		g := goEval(authority.Postgres, ft)
		ev.current, ev.kandev = g.current, g.kandev
	}
	return ev
}

// TestFixturePostgresFragments runs every shared fixture case through
// PostgreSQL's fragments (the snapshot statement itself is tested in
// internal/kandev).
func TestFixturePostgresFragments(t *testing.T) {
	cases, err := kandevdb.LoadResolutionCases(fixture)
	if err != nil {
		t.Fatal(err)
	}
	db := startPostgres(t)
	for _, c := range cases {
		ft := make([]fuzzTurn, len(c.Turns))
		for i, tr := range c.Turns {
			ft[i] = fuzzTurn{id: tr.ID, started: tr.StartedAt, created: tr.CreatedAt, completed: tr.CompletedAt, meta: tr.Metadata, messages: tr.Messages > 0}
		}
		ev := postgresEval(t, db, ft)
		if ev.current != deref0(c.ExpectedCurrentTurnID) {
			t.Errorf("%s: PostgreSQL current turn %q, want %q", c.Name, ev.current, deref0(c.ExpectedCurrentTurnID))
		}
	}
}

func deref0(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// FuzzResolvePostgres is the differential fuzz test of the Go rule
// (PostgreSQL mode) against a real PostgreSQL, on the same inputs as
// FuzzResolveSQLite (go test runs its seed corpus): the turn picked, each
// turn's flags and whether the ::jsonb cast accepts its metadata. make fuzz
// runs it briefly (each input is a few round trips, so it runs far fewer
// inputs than SQLite's).
func FuzzResolvePostgres(f *testing.F) {
	for _, s := range seeds() {
		f.Add([]byte(s[0]), s[1])
	}
	db := startPostgres(f)
	f.Fuzz(func(t *testing.T, shape []byte, raw string) {
		ft := forPostgres(decode(shape, raw))
		compare(t, authority.Postgres, ft, postgresEval(t, db, ft), goEval(authority.Postgres, ft))
	})
}
