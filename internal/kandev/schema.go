package kandev

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/watchdogd/watchdogd/internal/authority"
)

// required lists every column watchdogd reads, per table.
var required = map[string][]string{
	"tasks":                 {"id", "workspace_id", "title", "metadata", "archived_at"},
	"task_sessions":         {"id", "task_id", "state", "is_primary", "started_at"},
	"task_session_turns":    {"id", "task_session_id", "started_at", "created_at", "completed_at", "metadata"},
	"task_session_messages": {"id", "turn_id", "author_type", "type", "content", "metadata", "created_at", "updated_at"},
}

// optional lists the columns read where their table exists: a kandev
// without queued_messages has none queued.
var optional = map[string][]string{"queued_messages": {"session_id"}}

// The schema statements list every column of every table and view the
// reader could name, and whether this connection may SELECT it.
// PostgreSQL's information_schema lists only the columns a role holds
// some privilege on, so a missing GRANT would read there as a missing
// table (or, for queued_messages, as none queued: findings from a partial
// read); the catalog lists them all, and has_column_privilege says which
// may be read (a table's grant covers each of its columns).
const (
	sqliteSchema = `SELECT m.name, p.name, 1 FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type IN ('table', 'view')`
	pgSchema     = `SELECT c.relname::text, a.attname::text, has_column_privilege(c.oid, a.attnum, 'SELECT')
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
 WHERE n.nspname = ANY (current_schemas(false)) AND c.relkind IN ('r', 'v', 'm', 'p', 'f')`
)

// checkSchema verifies, in one statement, that every table and column
// watchdogd reads exists and may be read; queued_messages may be absent
// (read as empty), but not unreadable.
func (r *Reader) checkSchema(ctx context.Context) error {
	q := sqliteSchema
	if r.dialect == authority.Postgres {
		q = pgSchema
	}
	rows, err := r.db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("kandev database %s: read schema: %w", r.name, err)
	}
	defer func() { _ = rows.Close() }()
	// have maps "table" and "table.column" to whether it may be read.
	have := map[string]bool{}
	for rows.Next() {
		var table, col string
		var readable bool
		if err := rows.Scan(&table, &col, &readable); err != nil {
			return fmt.Errorf("kandev database %s: read schema: %w", r.name, err)
		}
		table, col = strings.ToLower(table), strings.ToLower(col)
		have[table+"."+col] = have[table+"."+col] || readable
		have[table] = have[table] || readable
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("kandev database %s: read schema: %w", r.name, err)
	}
	missing, denied := schemaGaps(have)
	if len(missing) > 0 {
		return fmt.Errorf("kandev database %s is missing %s (is this a kandev database?)", r.name, strings.Join(missing, ", "))
	}
	if len(denied) > 0 {
		return r.deniedError(ctx, denied)
	}
	_, r.hasQueued = have["queued_messages.session_id"]
	if r.dialect == authority.SQLite {
		return r.findProbeIndex(ctx)
	}
	return nil
}

// schemaGaps lists, sorted, the columns watchdogd reads that do not
// exist, and those that exist without the SELECT privilege ("table" when
// no column of it may be read, else "table.column").
func schemaGaps(have map[string]bool) (missing, denied []string) {
	check := func(table string, cols []string, needed bool) {
		if _, ok := have[table]; !ok && !needed {
			return
		}
		var cut []string
		for _, c := range cols {
			readable, ok := have[table+"."+c]
			switch {
			case !ok:
				missing = append(missing, table+"."+c)
			case !readable:
				cut = append(cut, table+"."+c)
			}
		}
		if len(cut) > 0 && !have[table] {
			cut = []string{table}
		}
		denied = append(denied, cut...)
	}
	for table, cols := range required {
		check(table, cols, true)
	}
	for table, cols := range optional {
		check(table, cols, false)
	}
	sort.Strings(missing)
	sort.Strings(denied)
	return missing, denied
}

// deniedError is the error of a role that may not read what watchdogd
// reads, with the statement kandev's database owner runs to fix it.
func (r *Reader) deniedError(ctx context.Context, denied []string) error {
	role := "this role"
	var name string
	if err := r.db.QueryRowContext(ctx, `SELECT current_user::text`).Scan(&name); err == nil {
		role = pgx.Identifier{name}.Sanitize()
	}
	tables := map[string]bool{}
	var grant []string
	for _, d := range denied {
		t, _, _ := strings.Cut(d, ".")
		if !tables[t] {
			tables[t] = true
			grant = append(grant, t)
		}
	}
	return fmt.Errorf("kandev database %s: role %s lacks the SELECT privilege on %s; as the owner of kandev's tables run: GRANT SELECT ON %s TO %s",
		r.name, role, strings.Join(denied, ", "), strings.Join(grant, ", "), role)
}
