package kandevdb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the production driver, for realistic files

	"github.com/watchdogd/watchdogd/internal/kandevtime"
)

// Options shape the schema.
type Options struct {
	// WithoutQueuedTable leaves queued_messages out, as in old kandev
	// databases.
	WithoutQueuedTable bool
	// DeferIndexes leaves kandev's secondary indexes to CreateIndexes, for
	// bulk loads.
	DeferIndexes bool
}

// SQLite is a kandev-shaped SQLite file opened read-write.
type SQLite struct {
	Path string
	db   *sql.DB
}

// CreateSQLite creates a kandev-shaped SQLite file (WAL mode) at path.
func CreateSQLite(path string, opts Options) (*SQLite, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=synchronous(OFF)")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	schema := sqliteSchema
	if !opts.WithoutQueuedTable {
		schema += queuedSchema
	}
	if !opts.DeferIndexes {
		schema += indexes
	}
	if _, err := db.Exec(schema); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("create kandev schema in %s: %w", path, err)
	}
	return &SQLite{Path: path, db: db}, nil
}

// URL is the database URL watchdogd takes for this file.
func (s *SQLite) URL() string { return "sqlite://" + s.Path }

// CreateIndexes builds kandev's indexes after a DeferIndexes load.
func (s *SQLite) CreateIndexes(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, indexes)
	return err
}

// DB is the read-write handle, for tests that change rows.
func (s *SQLite) DB() *sql.DB { return s.db }

// Close closes the handle.
func (s *SQLite) Close() error { return s.db.Close() }

// AddQueuedTable creates queued_messages in a database made without it, as
// upgrading an old kandev does.
func (s *SQLite) AddQueuedTable(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, queuedSchema)
	return err
}

// Write inserts the rows in one transaction.
func (s *SQLite) Write(ctx context.Context, d Dataset) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	for _, t := range tables(d) {
		if len(t.rows) == 0 {
			continue
		}
		stmt, err := tx.PrepareContext(ctx, t.insertSQL())
		if err != nil {
			return fmt.Errorf("prepare %s: %w", t.name, err)
		}
		for _, r := range t.rows {
			if _, err := stmt.ExecContext(ctx, r...); err != nil {
				_ = stmt.Close()
				return fmt.Errorf("insert into %s: %w", t.name, err)
			}
		}
		_ = stmt.Close()
	}
	return tx.Commit()
}

// Postgres is a kandev-shaped schema in a PostgreSQL database.
type Postgres struct {
	DSN  string
	conn *pgx.Conn
}

// CreatePostgres creates kandev's tables in the (empty) database at dsn.
func CreatePostgres(ctx context.Context, dsn string, opts Options) (*Postgres, error) {
	p, err := OpenPostgres(ctx, dsn)
	if err != nil {
		return nil, err
	}
	schema := postgresSchema
	if !opts.WithoutQueuedTable {
		schema += queuedSchema
	}
	if !opts.DeferIndexes {
		schema += indexes
	}
	if _, err := p.conn.Exec(ctx, schema); err != nil {
		_ = p.Close()
		return nil, fmt.Errorf("create kandev schema: %w", err)
	}
	return p, nil
}

// OpenPostgres connects to a database that already holds kandev's tables.
func OpenPostgres(ctx context.Context, dsn string) (*Postgres, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connect to test PostgreSQL: %w", err)
	}
	return &Postgres{DSN: dsn, conn: conn}, nil
}

// URL is the database URL watchdogd takes for this database.
func (p *Postgres) URL() string { return p.DSN }

// CreateIndexes builds kandev's indexes after a DeferIndexes load, and
// gathers statistics as autovacuum would.
func (p *Postgres) CreateIndexes(ctx context.Context) error {
	if _, err := p.conn.Exec(ctx, indexes); err != nil {
		return err
	}
	_, err := p.conn.Exec(ctx, "ANALYZE")
	return err
}

// Analyze gathers statistics after more rows (autovacuum's job).
func (p *Postgres) Analyze(ctx context.Context) error {
	_, err := p.conn.Exec(ctx, "ANALYZE")
	return err
}

// Conn is the read-write connection, for tests that change rows.
func (p *Postgres) Conn() *pgx.Conn { return p.conn }

// Close closes the connection.
func (p *Postgres) Close() error { return p.conn.Close(context.Background()) }

// Write copies the rows in (COPY, so benchmark datasets load quickly).
func (p *Postgres) Write(ctx context.Context, d Dataset) error {
	for _, t := range tables(d) {
		if len(t.rows) == 0 {
			continue
		}
		rows := make([][]any, len(t.rows))
		for i, r := range t.rows {
			pr, err := pgRow(r, t.timeCols)
			if err != nil {
				return fmt.Errorf("%s row %d: %w", t.name, i, err)
			}
			rows[i] = pr
		}
		if _, err := p.conn.CopyFrom(ctx, pgx.Identifier{t.name}, t.cols, pgx.CopyFromRows(rows)); err != nil {
			return fmt.Errorf("copy into %s: %w", t.name, err)
		}
	}
	return nil
}

// pgRow turns timestamp text into UTC instants for PostgreSQL.
func pgRow(r []any, timeCols map[int]bool) ([]any, error) {
	out := make([]any, len(r))
	for i, v := range r {
		if !timeCols[i] {
			out[i] = v
			continue
		}
		var text *string
		switch x := v.(type) {
		case string:
			text = &x
		case *string:
			text = x
		}
		if text == nil {
			out[i] = nil
			continue
		}
		t, ok := kandevtime.Parse(*text)
		if !ok {
			return nil, fmt.Errorf("timestamp %q cannot be stored in PostgreSQL", *text)
		}
		out[i] = t
	}
	return out, nil
}

type table struct {
	name     string
	cols     []string
	timeCols map[int]bool
	rows     [][]any
}

func (t table) insertSQL() string {
	q := "INSERT INTO " + t.name + " ("
	vals := ""
	for i, c := range t.cols {
		if i > 0 {
			q += ", "
			vals += ", "
		}
		q += c
		vals += "?"
	}
	return q + ") VALUES (" + vals + ")"
}

func tables(d Dataset) []table {
	ts := func(idx ...int) map[int]bool {
		m := map[int]bool{}
		for _, i := range idx {
			m[i] = true
		}
		return m
	}
	out := []table{
		{name: "tasks", cols: []string{"id", "workspace_id", "title", "state", "metadata", "archived_at", "created_at", "updated_at"}, timeCols: ts(5, 6, 7)},
		{name: "task_sessions", cols: []string{"id", "task_id", "state", "is_primary", "started_at", "completed_at", "updated_at"}, timeCols: ts(4, 5, 6)},
		{name: "task_session_turns", cols: []string{"id", "task_session_id", "task_id", "started_at", "created_at", "completed_at", "metadata", "updated_at"}, timeCols: ts(3, 4, 5, 7)},
		{name: "task_session_messages", cols: []string{"id", "task_session_id", "task_id", "turn_id", "author_type", "type", "content", "metadata", "created_at", "updated_at"}, timeCols: ts(8, 9)},
		{name: "queued_messages", cols: []string{"id", "session_id", "task_id", "position", "content", "queued_at"}, timeCols: ts(5)},
	}
	for _, t := range d.Tasks {
		out[0].rows = append(out[0].rows, []any{t.ID, t.WorkspaceID, t.Title, or(t.State, "IN_PROGRESS"), t.Metadata, t.ArchivedAt, or(t.CreatedAt, epoch), or(t.CreatedAt, epoch)})
	}
	for _, s := range d.Sessions {
		primary := 0
		if s.IsPrimary {
			primary = 1
		}
		out[1].rows = append(out[1].rows, []any{s.ID, s.TaskID, s.State, primary, s.StartedAt, s.CompletedAt, or(s.UpdatedAt, epoch)})
	}
	for _, t := range d.Turns {
		updated := &t.StartedAt
		switch {
		case t.UpdatedAt != nil:
			updated = t.UpdatedAt
		case t.CompletedAt != nil:
			updated = t.CompletedAt
		}
		out[2].rows = append(out[2].rows, []any{t.ID, t.SessionID, t.TaskID, t.StartedAt, t.CreatedAt, t.CompletedAt, t.Metadata, updated})
	}
	for _, m := range d.Messages {
		out[3].rows = append(out[3].rows, []any{m.ID, m.SessionID, m.TaskID, m.TurnID, or(m.Author, "agent"), or(m.Type, "message"), m.Content, m.Metadata, m.CreatedAt, or(m.UpdatedAt, m.CreatedAt)})
	}
	for _, q := range d.Queued {
		out[4].rows = append(out[4].rows, []any{q.ID, q.SessionID, q.TaskID, q.Position, q.Content, q.QueuedAt})
	}
	return out
}

var epoch = TS(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// OpenSQLite opens an existing kandev-shaped file read-write.
func OpenSQLite(path string) (*SQLite, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=synchronous(OFF)")
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return &SQLite{Path: path, db: db}, nil
}
