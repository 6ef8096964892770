// Package ledger is watchdogd's own store — never kandev's. It keeps
// episodes (one finding's life), actions (every side effect, saved before
// delivery under an idempotency key with a digest of the decision, claimed by
// compare-and-set, settled from evidence), leases, runtime silences and
// Slack channel gates.
package ledger

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	_ "modernc.org/sqlite" // pure-Go SQLite

	"github.com/watchdogd/watchdogd/internal/dburl"
)

//go:embed migrations/*.sql
var migrations embed.FS

// pgSchema is the ledger's own schema in a shared PostgreSQL database.
const pgSchema = "watchdogd"

// Store is an open ledger.
type Store struct {
	db   *sql.DB
	pg   bool
	name string
	// cleanup, if set, runs after Close (OpenCopy's copy is removed).
	cleanup func()
}

// Open connects to the ledger at url (sqlite://… or postgres://…) and
// applies pending migrations; two processes starting at once serialise on
// a lock (an advisory lock on PostgreSQL, a file lock beside the SQLite file
// held for the whole start).
func Open(ctx context.Context, url string) (*Store, error) {
	return open(ctx, url, false)
}

// ErrNoLedger is returned by OpenExisting when the ledger was never created.
var ErrNoLedger = errors.New("not found")

// OpenExisting opens a ledger that a daemon has already created, for the
// operator commands: run with the wrong config or in the wrong directory,
// they must say so rather than create an empty ledger and report that
// nothing is open or silenced.
func OpenExisting(ctx context.Context, url string) (*Store, error) {
	return open(ctx, url, true)
}

func open(ctx context.Context, url string, mustExist bool) (*Store, error) {
	target, err := dburl.Parse(url)
	if err != nil {
		return nil, fmt.Errorf("state.url: %w", err)
	}
	s := &Store{name: dburl.Redact(url)}
	var dialect goose.Dialect
	var opts []goose.ProviderOption
	switch target.Kind {
	case dburl.SQLite:
		unlock, err := s.openSQLite(ctx, target.Path, mustExist)
		if err != nil {
			return nil, err
		}
		// The file lock covers the whole start, migrations included.
		defer unlock()
		dialect = goose.DialectSQLite3
	case dburl.Postgres:
		locker, err := s.openPostgres(ctx, target.DSN)
		if err != nil {
			return nil, err
		}
		dialect = goose.DialectPostgres
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	s.db.SetMaxOpenConns(4)
	if s.pg {
		if err := s.checkPostgres(ctx); err != nil {
			_ = s.db.Close()
			return nil, err
		}
	}
	if mustExist && s.pg {
		if err := s.schemaExists(ctx); err != nil {
			_ = s.db.Close()
			return nil, err
		}
	}
	if err := s.migrate(ctx, dialect, opts); err != nil {
		_ = s.db.Close()
		return nil, err
	}
	return s, nil
}

// openSQLite opens the ledger file with the lock that serializes starts
// held; the caller releases it once migrations are done.
func (s *Store) openSQLite(ctx context.Context, path string, mustExist bool) (unlock func(), err error) {
	if mustExist {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("ledger %s: %w", s.name, ErrNoLedger)
		}
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("ledger %s: %w", s.name, err)
		}
	}
	// The file lock covers the whole start, not only goose's migrations:
	// the first connections switch a fresh file to WAL, and SQLite may
	// answer SQLITE_BUSY to a concurrent one without waiting.
	unlock, err = lockFile(ctx, path+".migrate-lock")
	if err != nil {
		return nil, fmt.Errorf("ledger %s: lock for start: %w", s.name, err)
	}
	// _txlock=immediate: every transaction takes the write lock at BEGIN,
	// so concurrent deciders queue on the busy timeout instead of failing
	// on a lock upgrade. temp_store(2): a sort that outgrows the page cache
	// stays in memory, since the chart's read-only root filesystem leaves
	// SQLite no temporary directory to spill to (the ledger is small).
	dsn := fmt.Sprintf("file:%s?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_pragma=temp_store(2)",
		dburl.EscapeSQLitePath(path))
	if s.db, err = sql.Open("sqlite", dsn); err != nil {
		unlock()
		return nil, fmt.Errorf("ledger %s: %w", s.name, err)
	}
	return unlock, nil
}

// openPostgres opens the ledger's pool in its own schema and returns the
// advisory-lock locker that serializes migrations across replicas.
func (s *Store) openPostgres(ctx context.Context, dsn string) (lock.SessionLocker, error) {
	s.pg = true
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", s.name, dburl.RedactError(err, dsn))
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = "watchdogd-ledger"
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, fmt.Errorf("ledger %s: migration lock: %w", s.name, err)
	}
	// Every transaction at READ COMMITTED, whatever the server's, the
	// role's or the database's default: a statement that meets a row
	// another committed meanwhile (a settle after a decision touched its
	// action, a lease renewed by two) then waits and re-reads it, where at
	// REPEATABLE READ or SERIALIZABLE it fails (SQLSTATE 40001) and a
	// delivery's outcome would be lost.
	withPath := cfg.Copy() // with its own RuntimeParams
	withPath.RuntimeParams["search_path"] = pgSchema
	withPath.RuntimeParams["default_transaction_isolation"] = "read committed"
	s.db = stdlib.OpenDB(*withPath)
	if err := s.db.PingContext(ctx); dburl.RefusedStartupParams(err) {
		// PgBouncer (session pooling) refuses search_path (and the
		// isolation) at startup; each connection sets them first instead. Session pooling keeps
		// it for the client's session and resets it when the client
		// leaves. Transaction pooling cannot serve the ledger at all (its
		// migrations hold a session advisory lock): see the runbook.
		_ = s.db.Close()
		s.db = stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(func(ctx context.Context, c *pgx.Conn) error {
			if _, err := c.Exec(ctx, "SET search_path TO "+pgSchema); err != nil {
				return err
			}
			_, err := c.Exec(ctx, "SET default_transaction_isolation TO 'read committed'")
			return err
		}))
	}
	return locker, nil
}

// schemaExists fails with ErrNoLedger when the ledger's schema is missing.
func (s *Store) schemaExists(ctx context.Context) error {
	var ok bool
	if err := s.db.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", pgSchema).Scan(&ok); err != nil {
		return fmt.Errorf("ledger %s: %w", s.name, err)
	}
	if !ok {
		return fmt.Errorf("ledger %s: %w", s.name, ErrNoLedger)
	}
	return nil
}

func (s *Store) migrate(ctx context.Context, dialect goose.Dialect, opts []goose.ProviderOption) error {
	if s.pg {
		// The schema must exist before goose's version table can; CREATE
		// SCHEMA IF NOT EXISTS races with itself, so serialise it too.
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("ledger %s: %w", s.name, err)
		}
		defer func() { _ = conn.Close() }()
		for _, q := range []string{"SELECT pg_advisory_lock(7214391)", "CREATE SCHEMA IF NOT EXISTS " + pgSchema, "SELECT pg_advisory_unlock(7214391)"} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("ledger %s: create schema: %w", s.name, err)
			}
		}
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(dialect, s.db, sub, append(opts, goose.WithDisableGlobalRegistry(true))...)
	if err != nil {
		return fmt.Errorf("ledger %s: migrations: %w", s.name, err)
	}
	if err := s.refuseNewer(ctx, p); err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("ledger %s: migrate: %w", s.name, err)
	}
	// Again: a newer watchdogd may have migrated between the check and Up.
	return s.refuseNewer(ctx, p)
}

// ErrNewerSchema is returned by Open for a ledger whose schema a newer
// watchdogd migrated.
var ErrNewerSchema = errors.New("written by a newer watchdogd")

// refuseNewer refuses a ledger migrated past the newest migration this
// binary embeds: goose would find nothing to apply and this watchdogd
// would run on tables it does not know (after a rollback, say), where a
// renamed column or a new state could break exactly-once delivery.
func (s *Store) refuseNewer(ctx context.Context, p *goose.Provider) error {
	have, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("ledger %s: read its schema version: %w", s.name, err)
	}
	known, err := Newest()
	if err != nil {
		return fmt.Errorf("ledger %s: %w", s.name, err)
	}
	if have > known {
		return fmt.Errorf("ledger %s: its schema is at version %d, %w; this one knows versions up to %d: run that watchdogd (or a later one), or restore the ledger from before the upgrade",
			s.name, have, ErrNewerSchema, known)
	}
	return nil
}

// Newest is the newest schema version this binary knows: its last
// migration's, by the number its file name starts with (as goose reads it).
func Newest() (int64, error) {
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return 0, fmt.Errorf("migrations: %w", err)
	}
	var newest int64
	for _, f := range files {
		v, err := strconv.ParseInt(strings.SplitN(path.Base(f), "_", 2)[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("migration %s: %w", f, err)
		}
		newest = max(newest, v)
	}
	return newest, nil
}

// Close closes the connections.
func (s *Store) Close() error {
	err := s.db.Close()
	if s.cleanup != nil {
		s.cleanup()
	}
	return err
}

// Ping checks the ledger is reachable (readiness).
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("ledger %s: %w", s.name, err)
	}
	return nil
}

// q rewrites ? placeholders as $n for PostgreSQL.
func (s *Store) q(query string) string {
	if !s.pg {
		return query
	}
	var b strings.Builder
	n := 0
	for _, c := range query {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (s *Store) wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("ledger %s: %s: %w", s.name, what, err)
}

// us is a time as stored: microseconds since the epoch; zero stays zero.
func us(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func fromUS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMicro(v).UTC()
}

func fromNullUS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromUS(v.Int64)
}

// lockFile serialises SQLite ledger starts across processes with flock(2)
// on a file beside the database. It returns the release.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil // closing releases the flock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
