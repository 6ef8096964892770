package kandev

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // the production SQLite driver, pure Go

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/dburl"
)

// Reader reads kandev's database. It never writes: SQLite is opened with
// mode=ro and query_only, every PostgreSQL snapshot runs in a READ ONLY
// transaction, and PostgreSQL sessions default to read-only unless a pooler
// in front of the server refuses that setting.
type Reader struct {
	db        *sql.DB
	dialect   authority.Dialect
	name      string // redacted, for errors
	hasQueued bool
	// probeIndex is SQLite's index on task_session_turns(task_session_id,
	// started_at), named in the probes so that they walk turns newest first
	// and stop at the first match ("" when kandev's file has no such index).
	probeIndex string
	// onStatement is called once per SQL statement a snapshot runs; tests
	// count statements with it (a snapshot runs a fixed number of them).
	onStatement func(query string)
	// notAfter is Options.NotAfter.
	notAfter func() time.Time
	// stallAfter is Options.StallAfter.
	stallAfter time.Duration
	// lastSessions is the previous full snapshot's session count, the
	// capacity the next one starts with: growing a slice of 10,000 Sessions
	// by doubling cost more than decoding them.
	lastSessions atomic.Int64
	// pooled says a pooler in front of the PostgreSQL server refused the
	// session settings sent at startup, so each snapshot sets them for its
	// own transaction.
	pooled bool
}

// Options tune Open.
type Options struct {
	// BusyTimeout is how long a SQLite read waits on a lock (default 5s).
	BusyTimeout time.Duration
	// OnStatement, if set, sees every statement a snapshot runs.
	OnStatement func(query string)
	// NotAfter, if set, gives each snapshot the latest instant it takes a
	// timestamp to be (the scan's instant plus a tolerance): a later one
	// cannot be true, and is read as missing and listed in
	// Snapshot.Future. kandev writes some values with SQL's
	// CURRENT_TIMESTAMP, local time on a PostgreSQL role outside UTC.
	NotAfter func() time.Time
	// StallAfter is the scan's thresholds.stall_after: a turn closed that
	// long after its agent's last activity may have been abandoned
	// (scan.MayBeAbandoned), and its replies are read.
	StallAfter time.Duration
}

// Open connects to kandev's database and checks the schema watchdogd reads.
func Open(ctx context.Context, rawURL string, opts Options) (*Reader, error) {
	target, err := dburl.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	r := &Reader{dialect: authority.SQLite, name: dburl.Redact(rawURL), onStatement: opts.OnStatement, notAfter: opts.NotAfter, stallAfter: opts.StallAfter}
	var pgConfig *pgx.ConnConfig
	if target.Kind == dburl.Postgres {
		r.dialect = authority.Postgres
		pgConfig, err = r.openPostgres(target.DSN)
	} else {
		err = r.openSQLite(target.Path, opts.BusyTimeout)
	}
	if err != nil {
		return nil, err
	}
	err = r.checkSchema(ctx)
	if dburl.RefusedStartupParams(err) {
		// A pooler in front of kandev's server (PgBouncer by default)
		// accepts only the startup parameters it tracks. Session settings
		// must not be sent any other way, since a pooler would leave them
		// on a server connection kandev's own clients get next; each
		// snapshot's transaction sets what it needs for itself.
		_ = r.db.Close()
		r.db, r.pooled = pgPool(pgConfig, false), true
		err = r.checkSchema(ctx)
	}
	if err != nil {
		_ = r.db.Close()
		return nil, err
	}
	return r, nil
}

func (r *Reader) openSQLite(path string, busyTimeout time.Duration) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("kandev database %s: %w", path, err)
	}
	if busyTimeout <= 0 {
		busyTimeout = 5 * time.Second
	}
	db, err := sql.Open("sqlite", sqliteDSN(path, int(busyTimeout/time.Millisecond)))
	if err != nil {
		return fmt.Errorf("open kandev database %s: %w", r.name, err)
	}
	// An observer keeps no connection to kandev's file between reads:
	// in WAL mode an open connection holds a shared lock on it, which
	// would stand in the way of kandev's own exclusive operations.
	db.SetMaxIdleConns(0)
	db.SetMaxOpenConns(2)
	r.db = db
	return nil
}

// openPostgres opens a pool that sends the scan's session settings at
// startup, and returns the configuration Open falls back to without them.
func (r *Reader) openPostgres(dsn string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("kandev database %s: %w", r.name, dburl.RedactError(err, dsn))
	}
	if !strings.Contains(dsn, "default_query_exec_mode") {
		// Unnamed statements, one round trip each: a transaction pooler
		// (PgBouncer before 1.21, RDS Proxy, Supavisor) hands each
		// transaction another server connection, where a named statement
		// cached on the last one does not exist. A scan runs each
		// statement once a cycle, so a cache would save nothing.
		cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
	r.db = pgPool(cfg, true)
	return cfg, nil
}

// pgPool opens a pool on cfg, sending at startup the session settings a
// scan wants when params is set.
func pgPool(cfg *pgx.ConnConfig, params bool) *sql.DB {
	cfg = cfg.Copy() // with its own RuntimeParams
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	rp := cfg.RuntimeParams
	if params {
		rp["default_transaction_read_only"] = "on"
		// The snapshot's statements are cheap per row but costed high on
		// big tables; JIT compilation would add tens of milliseconds to
		// every scan for nothing.
		rp["jit"] = "off"
	}
	if _, ok := rp["application_name"]; !ok {
		rp["application_name"] = "watchdogd"
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(2)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return db
}

// Dialect is the database kind behind the reader.
func (r *Reader) Dialect() authority.Dialect { return r.dialect }

// Close releases the connections.
func (r *Reader) Close() error { return r.db.Close() }

// findProbeIndex looks for kandev's (task_session_id, started_at) index.
// Without statistics (kandev never runs ANALYZE) SQLite's planner prefers
// the single-column session index for the probes and then sorts every turn
// of the session, evaluating the rule on each; naming the index lets each
// probe stop after a turn or two.
//
// kandev's analytics store adds (task_session_id, started_at, completed_at)
// at every start. Where both exist the probes name that one, whichever
// order SQLite lists them in: it holds completed_at too, so the open-turn
// probe tests it in the index before reading a turn's row (measured: see
// docs/benchmarks.md, appendix).
func (r *Reader) findProbeIndex(ctx context.Context) error {
	var covering string
	rows, err := r.db.QueryContext(ctx, `SELECT il.name,
	    (SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_index_info(il.name) ORDER BY seqno))
	  FROM pragma_index_list('task_session_turns') il`)
	if err != nil {
		return fmt.Errorf("kandev database %s: read indexes: %w", r.name, err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var name string
		var cols sql.NullString
		if err := rows.Scan(&name, &cols); err != nil {
			return fmt.Errorf("kandev database %s: read indexes: %w", r.name, err)
		}
		switch {
		case strings.HasPrefix(cols.String, "task_session_id,started_at,completed_at"):
			covering = name
		case strings.HasPrefix(cols.String, "task_session_id,started_at") && r.probeIndex == "":
			r.probeIndex = name
		}
	}
	if covering != "" {
		r.probeIndex = covering
	}
	return rows.Err()
}

// DBForBench exposes the pool to the benchmark's diagnostics.
func (r *Reader) DBForBench() *sql.DB { return r.db }
