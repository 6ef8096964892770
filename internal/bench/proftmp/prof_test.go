//go:build proftmp

package proftmp

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"sort"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/watchdogd/watchdogd/internal/kandev"
)

func med(t *testing.T, name string, n int, f func()) {
	var d []time.Duration
	for i := 0; i < n; i++ {
		s := time.Now()
		f()
		d = append(d, time.Since(s))
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	t.Logf("%-20s %v", name, d[n/2])
}

func drain(t *testing.T, db *sql.DB, q string, args ...any) int {
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	n := 0
	for rows.Next() {
		v := make([]any, len(cols))
		p := make([]any, len(cols))
		for i := range v {
			p[i] = &v[i]
		}
		if err := rows.Scan(p...); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	return n
}

func TestProf(t *testing.T) {
	url := os.Getenv("PROF_URL")
	ctx := context.Background()
	r, err := kandev.Open(ctx, url, kandev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	driver, dsn := "sqlite", "file:"+url[len("sqlite://"):]+"?mode=ro"
	pg := false
	if url[:8] == "postgres" {
		driver, dsn, pg = "pgx", url+"&jit=off", true
	}
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := r.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range snap.Sessions {
		if s.Current != nil {
			ids = append(ids, s.Current.ID)
		}
	}
	sessions, messages := r.Statements()
	var arg any = ids
	if !pg {
		b, _ := json.Marshal(ids)
		arg = string(b)
	}
	if pg {
		extra = pgExtra
	}
	for _, q := range extra {
		t.Logf("rows %d", drain(t, raw, q))
	}
	med(t, "snapshot", 9, func() { r.Snapshot(ctx) })
	med(t, "sessions", 9, func() { drain(t, raw, sessions) })
	med(t, "messages", 9, func() { drain(t, raw, messages, arg) })
	for i, q := range extra {
		med(t, "extra"+string(rune('0'+i)), 9, func() { drain(t, raw, q) })
	}
}

var extra = []string{
`WITH active AS (
  SELECT s.id AS session_id, s.task_id, s.state, CAST(s.is_primary AS INTEGER) <> 0 AS is_primary,
         CAST(s.started_at AS TEXT) AS session_started_at, t.title, t.workspace_id, t.metadata AS task_metadata
  FROM task_sessions s JOIN tasks t ON t.id = s.task_id AND t.archived_at IS NULL
  WHERE s.state IN ('CREATED', 'STARTING', 'RUNNING', 'IDLE', 'WAITING_FOR_INPUT')
) SELECT a.*, (SELECT json_array(tu.id, CAST(tu.started_at AS TEXT)) FROM task_session_turns tu INDEXED BY idx_turns_session_started WHERE tu.task_session_id=a.session_id AND (NOT (CASE WHEN instr(tu.metadata, '"prompt_dispatch_pending"') > 0 AND json_valid(tu.metadata) THEN CAST(COALESCE(json_extract(tu.metadata, '$.prompt_dispatch_pending'), '') AS TEXT) IN ('true', '1') ELSE 0 END) OR (CASE WHEN instr(tu.metadata, '"prompt_dispatch_attempted"') > 0 AND json_valid(tu.metadata) THEN CAST(COALESCE(json_extract(tu.metadata, '$.prompt_dispatch_attempted'), '') AS TEXT) IN ('true', '1') ELSE 0 END) OR EXISTS (SELECT 1 FROM task_session_messages authority_m WHERE authority_m.turn_id = tu.id)) ORDER BY tu.started_at DESC, tu.created_at DESC, tu.id DESC LIMIT 1) FROM active a`,
`WITH active AS (
  SELECT s.id AS session_id, s.task_id, s.state, CAST(s.is_primary AS INTEGER) <> 0 AS is_primary,
         CAST(s.started_at AS TEXT) AS session_started_at, t.title, t.workspace_id, t.metadata AS task_metadata
  FROM task_sessions s JOIN tasks t ON t.id = s.task_id AND t.archived_at IS NULL
  WHERE s.state IN ('CREATED', 'STARTING', 'RUNNING', 'IDLE', 'WAITING_FOR_INPUT')
) SELECT a.*, (SELECT json_array(tu.id, CAST(tu.started_at AS TEXT)) FROM task_session_turns tu INDEXED BY idx_turns_session_started WHERE tu.task_session_id=a.session_id AND (NOT (CASE WHEN instr(tu.metadata, '"prompt_dispatch_pending"') > 0 AND json_valid(tu.metadata) THEN CAST(COALESCE(json_extract(tu.metadata, '$.prompt_dispatch_pending'), '') AS TEXT) IN ('true', '1') ELSE 0 END) OR (CASE WHEN instr(tu.metadata, '"prompt_dispatch_attempted"') > 0 AND json_valid(tu.metadata) THEN CAST(COALESCE(json_extract(tu.metadata, '$.prompt_dispatch_attempted'), '') AS TEXT) IN ('true', '1') ELSE 0 END) OR EXISTS (SELECT 1 FROM task_session_messages authority_m WHERE authority_m.turn_id = tu.id)) AND tu.started_at IS (SELECT tu2.started_at FROM task_session_turns tu2 INDEXED BY idx_turns_session_started WHERE tu2.task_session_id=a.session_id AND (NOT (CASE WHEN instr(tu2.metadata, '"prompt_dispatch_pending"') > 0 AND json_valid(tu2.metadata) THEN CAST(COALESCE(json_extract(tu2.metadata, '$.prompt_dispatch_pending'), '') AS TEXT) IN ('true', '1') ELSE 0 END) OR (CASE WHEN instr(tu2.metadata, '"prompt_dispatch_attempted"') > 0 AND json_valid(tu2.metadata) THEN CAST(COALESCE(json_extract(tu2.metadata, '$.prompt_dispatch_attempted'), '') AS TEXT) IN ('true', '1') ELSE 0 END) OR EXISTS (SELECT 1 FROM task_session_messages am2 WHERE am2.turn_id = tu2.id)) ORDER BY tu2.started_at DESC LIMIT 1) ORDER BY tu.created_at DESC, tu.id DESC LIMIT 1) FROM active a`,
`WITH active AS (
  SELECT s.id AS session_id, s.task_id, s.state, CAST(s.is_primary AS INTEGER) <> 0 AS is_primary,
         CAST(s.started_at AS TEXT) AS session_started_at, t.title, t.workspace_id, t.metadata AS task_metadata
  FROM task_sessions s JOIN tasks t ON t.id = s.task_id AND t.archived_at IS NULL
  WHERE s.state IN ('CREATED', 'STARTING', 'RUNNING', 'IDLE', 'WAITING_FOR_INPUT')
) SELECT a.*, (SELECT json_array(tu.id, CAST(tu.started_at AS TEXT)) FROM task_session_turns tu INDEXED BY idx_turns_session_started WHERE tu.task_session_id=a.session_id AND (NOT (CASE WHEN instr(tu.metadata, '"prompt_dispatch_pending"') > 0 AND json_valid(tu.metadata) THEN CAST(COALESCE(json_extract(tu.metadata, '$.prompt_dispatch_pending'), '') AS TEXT) IN ('true', '1') ELSE 0 END) OR (CASE WHEN instr(tu.metadata, '"prompt_dispatch_attempted"') > 0 AND json_valid(tu.metadata) THEN CAST(COALESCE(json_extract(tu.metadata, '$.prompt_dispatch_attempted'), '') AS TEXT) IN ('true', '1') ELSE 0 END) OR EXISTS (SELECT 1 FROM task_session_messages authority_m WHERE authority_m.turn_id = tu.id)) ORDER BY tu.started_at DESC LIMIT 1) FROM active a`}

func TestPrint(t *testing.T) {
	r, err := kandev.Open(context.Background(), os.Getenv("PROF_URL"), kandev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, m := r.Statements()
	os.WriteFile("/tmp/sessions.sql", []byte(s), 0o644)
	os.WriteFile("/tmp/messages.sql", []byte(m), 0o644)
}

func TestSnapLoop(t *testing.T) {
	r, err := kandev.Open(context.Background(), os.Getenv("PROF_URL"), kandev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		if _, err := r.Snapshot(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

var pgExtra = []string{}
