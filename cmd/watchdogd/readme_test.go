package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

// readmeBlock is the body of the first fenced block of lang in the README
// section headed heading.
func readmeBlock(t *testing.T, heading, lang string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("the README has no section %q", heading)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "```"+lang+"\n")
	if !ok {
		t.Fatalf("the README's %q has no %s block", heading, lang)
	}
	block, _, _ = strings.Cut(block, "```")
	return block
}

// TestREADMEReadOnlyRole: the role the README tells a PostgreSQL kandev's
// owner to make, run as printed, lets `watchdogd scan` read everything it
// needs and write nothing: not kandev's tables, and no table it was not
// given.
func TestREADMEReadOnlyRole(t *testing.T) {
	ctx := context.Background()
	dsn := postgresKandev(t, "readme", kandevdb.Demo(demoNow))
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close(ctx) }()
	if _, err := admin.Exec(ctx, "CREATE TABLE kandev_secrets (token text)"); err != nil {
		t.Fatal(err)
	}
	// Roles are the cluster's: each run makes its own, named apart.
	role := fmt.Sprintf("watchdogd_readme_%d", time.Now().UnixNano())
	script := readmeBlock(t, "## From the demo to your kandev", "sql")
	name := regexp.MustCompile(`\bwatchdogd\b`)
	if n := len(name.FindAllString(script, -1)); n != 3 {
		t.Fatalf("the README's role is named %d times, not 3 (create, grant, alter) as this test expects:\n%s", n, script)
	}
	script = name.ReplaceAllString(script, role)
	for _, stmt := range strings.Split(strings.TrimSpace(script), ";") {
		if stmt = strings.TrimSpace(stmt); stmt == "" {
			continue
		}
		if _, err := admin.Exec(ctx, stmt); err != nil {
			t.Fatalf("the README's %q: %v", stmt, err)
		}
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("postgres://%s:change-me@%s:%d/%s?sslmode=disable", role, cfg.Host, cfg.Port, cfg.Database)

	r := watchdogd(t, nil, "scan", "--database-url", url, "--now", demoNow.Format(time.RFC3339), "--output", "json")
	if r.code != 0 || !strings.Contains(r.stdout, `"kind": "stalled_turn"`) {
		t.Fatalf("scan as the README's role: exit %d\n%.500s%s", r.code, r.stdout, r.stderr)
	}
	reader, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = reader.Close(ctx) }()
	for _, q := range []string{
		"UPDATE task_sessions SET state = 'COMPLETED'",
		"SELECT count(*) FROM kandev_secrets",
	} {
		if _, err := reader.Exec(ctx, q); err == nil {
			t.Errorf("the README's role may %q", q)
		}
	}
	// Even a grant made later by mistake writes nothing: the role's
	// transactions are read-only.
	if _, err := admin.Exec(ctx, "GRANT UPDATE ON task_sessions TO "+role); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Exec(ctx, "UPDATE task_sessions SET state = 'COMPLETED'"); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("with UPDATE granted, the README's role wrote (or failed otherwise: %v)", err)
	}
}
