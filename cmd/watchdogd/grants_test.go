package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

// TestPostgresMissingGrant: a PostgreSQL role short of a SELECT grant on
// one of the tables watchdogd reads gets one error naming the table (or
// the columns) and the missing privilege, with the GRANT that fixes it,
// and no report: neither kandev's schema called "missing" (PostgreSQL
// hides from information_schema what a role may not read) nor the demo's
// session with queued input reported as interrupted because
// queued_messages was read as empty.
func TestPostgresMissingGrant(t *testing.T) {
	ctx := context.Background()
	dsn := postgresKandev(t, "grants", kandevdb.Demo(demoNow))
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close(ctx) }()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		name   string
		grants []string
		want   string // what the error says the role lacks
		fix    string // the GRANT it prints
	}{
		{"no queued_messages", []string{"tasks, task_sessions, task_session_turns, task_session_messages"},
			"lacks the SELECT privilege on queued_messages;", "GRANT SELECT ON queued_messages TO"},
		{"no messages", []string{"tasks, task_sessions, task_session_turns, queued_messages"},
			"lacks the SELECT privilege on task_session_messages;", "GRANT SELECT ON task_session_messages TO"},
		{"some columns of tasks", []string{"task_sessions, task_session_turns, task_session_messages, queued_messages", "(id, workspace_id, metadata) ON tasks"},
			"lacks the SELECT privilege on tasks.archived_at, tasks.title;", "GRANT SELECT ON tasks TO"},
	} {
		role := fmt.Sprintf("watchdogd_grant_%d_%d", i, time.Now().UnixNano())
		stmts := []string{"CREATE ROLE " + role + " LOGIN PASSWORD 'pw'"}
		for _, g := range c.grants {
			if !strings.Contains(g, " ON ") {
				g = "ON " + g
			}
			stmts = append(stmts, "GRANT SELECT "+g+" TO "+role)
		}
		for _, s := range stmts {
			if _, err := admin.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %s: %v", c.name, s, err)
			}
		}
		url := fmt.Sprintf("postgres://%s:pw@%s:%d/%s?sslmode=disable", role, cfg.Host, cfg.Port, cfg.Database)
		r := watchdogd(t, nil, "scan", "--database-url", url, "--now", demoNow.Format(time.RFC3339), "--output", "json")
		fix := c.fix + ` "` + role + `"`
		if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, `role "`+role+`" `+c.want) || !strings.Contains(r.stderr, fix) ||
			strings.Contains(r.stderr, "missing") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%s: exit %d, want one error saying %q and %q:\nstdout: %.300s\nstderr: %s", c.name, r.code, c.want, fix, r.stdout, r.stderr)
		}
	}
}
