package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/pgtest"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// These tests run the real binary.
var (
	binary string
	pg     *pgtest.Server
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "watchdogd-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "watchdogd")
	// Built as it ships (CGO_ENABLED=0 and -trimpath, as make build builds
	// it for the image, and stamped with the commit, which build_info
	// names), except under the race detector, which needs cgo.
	args, cgo := []string{"build", "-trimpath", "-buildvcs=true", "-o", binary}, "CGO_ENABLED=0"
	if raceBuild {
		args, cgo = append(args, "-race"), "CGO_ENABLED=1"
	}
	build := exec.Command("go", append(args, ".")...)
	build.Env = append(os.Environ(), cgo)
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build watchdogd: %v\n%s", err, out)
		os.Exit(1)
	}
	code := pgtest.RunTests(m, func(s *pgtest.Server) { pg = s })
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

func watchdogd(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	checkRaces(t, errb.String())
	return result{out.String(), errb.String(), code}
}

// checkRaces fails the test when the binary, built with the race detector,
// reported a data race: a daemon the test kills never exits with the
// detector's status, so its output is what tells.
func checkRaces(t *testing.T, output string) {
	t.Helper()
	if raceBuild && strings.Contains(output, "WARNING: DATA RACE") {
		t.Errorf("watchdogd reported a data race:\n%s", output)
	}
}

var demoNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// TestSameReportOnBothDialects: one kandevdb dataset loaded into SQLite and
// into PostgreSQL gives the same report from `watchdogd scan`.
func TestSameReportOnBothDialects(t *testing.T) {
	ctx := context.Background()
	ds := kandevdb.Demo(demoNow)
	lite, err := kandevdb.CreateSQLite(filepath.Join(t.TempDir(), "kandev.db"), kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := lite.Write(ctx, ds); err != nil {
		t.Fatal(err)
	}
	_ = lite.Close()
	dsn := postgresKandev(t, "report", ds)

	reports := map[string]string{}
	for name, url := range map[string]string{"sqlite": lite.URL(), "postgres": dsn} {
		r := watchdogd(t, nil, "scan", "--database-url", url, "--now", demoNow.Format(time.RFC3339), "--output", "json")
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", name, r.code, r.stderr)
		}
		reports[name] = r.stdout
	}
	if reports["sqlite"] != reports["postgres"] {
		t.Fatalf("reports differ\nsqlite:\n%s\npostgres:\n%s", reports["sqlite"], reports["postgres"])
	}
	var rep scan.Report
	if err := json.Unmarshal([]byte(reports["sqlite"]), &rep); err != nil {
		t.Fatal(err)
	}
	kinds := map[model.Kind]bool{}
	for _, f := range rep.Findings {
		kinds[f.Kind] = true
	}
	for _, k := range model.Kinds {
		if !kinds[k] {
			t.Errorf("the demo dataset has no %s finding", k)
		}
	}
	if len(rep.Sessions) != 12 {
		t.Errorf("%d active sessions, want 12 (terminal and archived ones excluded)", len(rep.Sessions))
	}
}

// TestScanNotesBadRows: `watchdogd scan` names on stderr the rows it read
// only in part, as the daemon logs them, and keeps the JSON on stdout whole.
func TestScanNotesBadRows(t *testing.T) {
	lite, err := kandevdb.CreateSQLite(filepath.Join(t.TempDir(), "kandev.db"), kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lite.Close() }()
	if err := lite.Write(context.Background(), kandevdb.Demo(demoNow)); err != nil {
		t.Fatal(err)
	}
	if _, err := lite.DB().Exec(`UPDATE task_session_turns SET metadata = '{' WHERE id = 'turn-stalled';
		UPDATE task_session_turns SET started_at = 'yesterday' WHERE id = 'turn-never'`); err != nil {
		t.Fatal(err)
	}
	r := watchdogd(t, nil, "scan", "--database-url", lite.URL(), "--now", demoNow.Format(time.RFC3339), "--output", "json")
	var rep scan.Report
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep) != nil {
		t.Fatalf("exit %d, stdout not a report: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"note: 1 kandev row(s) kandev itself cannot read (malformed metadata, read as no flags; or a NULL id): task_session_turns/turn-stalled\n",
		"note: 1 kandev row(s) with a timestamp in no shape kandev writes, read as missing: task_session_turns/turn-never\n",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q lacks %q", r.stderr, want)
		}
	}
}

// TestDemo: `watchdogd demo` prints findings of every kind.
func TestDemo(t *testing.T) {
	r := watchdogd(t, nil, "demo")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, k := range model.Kinds {
		if !strings.Contains(r.stdout, string(k)) {
			t.Errorf("demo output lacks %s:\n%s", k, r.stdout)
		}
	}
}

// TestUsageErrors: unknown flags and unreadable databases give one clear
// line on stderr and a non-zero exit.
func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"scan", "--bogus"}, 2, "watchdogd scan: unknown long flag '--bogus'"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"check-config"}, 2, "watchdogd check-config: needs at least one file"},
		{[]string{"scan", "--now", "yesterday"}, 2, "--now \"yesterday\" is not an RFC 3339 time"},
		{[]string{"scan", "--database-url", "sqlite:///nonexistent/kandev.db"}, 1, "/nonexistent/kandev.db: stat"},
		{[]string{"scan", "--database-url", "mysql://x"}, 1, "want sqlite://PATH"},
		{[]string{"scan", "--database-url", "postgres://nobody:hunter2@127.0.0.1:1/x?connect_timeout=2"}, 1, "kandev database"},
		{[]string{"scan", "--output", "xml", "--database-url", "sqlite:///x"}, 2, `--output "xml"`},
	}
	for _, c := range cases {
		r := watchdogd(t, nil, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d stderr %q, want exit %d and %q", c.args, r.code, r.stderr, c.code, c.want)
		}
		if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n > 0 {
			t.Errorf("%v: %d lines on stderr, want one: %q", c.args, n+1, r.stderr)
		}
		if strings.Contains(r.stderr, "hunter2") {
			t.Errorf("%v: password on stderr: %q", c.args, r.stderr)
		}
	}
}

// TestDatabaseURLPrecedence: flag > env > file > kandev's default.
func TestDatabaseURLPrecedence(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := kandevdb.CreateSQLite(filepath.Join(dir, "kandev.db"), kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Write(ctx, kandevdb.Demo(demoNow)); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	cfg := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(cfg, []byte("database:\n  url: sqlite:///from/file.db\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// File only: its URL is used (and does not exist), and the error says
	// which line set it; so does one about the env's or the flag's.
	if r := watchdogd(t, nil, "scan", "--config", cfg); !strings.Contains(r.stderr, "/from/file.db") ||
		!strings.Contains(r.stderr, "(URL from database.url at "+cfg+":2)") {
		t.Errorf("file URL not used, or not named: %q", r.stderr)
	}
	if r := watchdogd(t, []string{"WATCHDOGD_DATABASE_URL=sqlite:///from/env.db"}, "scan", "--config", cfg); !strings.Contains(r.stderr, "(URL from $WATCHDOGD_DATABASE_URL)") {
		t.Errorf("env URL's error does not name it: %q", r.stderr)
	}
	if r := watchdogd(t, nil, "scan", "--config", cfg, "--database-url", "sqlite:///from/flag.db"); !strings.Contains(r.stderr, "(URL from --database-url)") {
		t.Errorf("flag URL's error does not name it: %q", r.stderr)
	}
	// Env beats file.
	if r := watchdogd(t, []string{"WATCHDOGD_DATABASE_URL=" + db.URL()}, "scan", "--config", cfg); r.code != 0 {
		t.Errorf("env URL not used: %q", r.stderr)
	}
	// Flag beats env.
	if r := watchdogd(t, []string{"WATCHDOGD_DATABASE_URL=sqlite:///from/env.db"}, "scan", "--config", cfg, "--database-url", db.URL()); r.code != 0 {
		t.Errorf("flag URL not used: %q", r.stderr)
	}
	// Nothing given: kandev's default under KANDEV_HOME_DIR.
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(filepath.Join(home, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "kandev.db"), filepath.Join(home, "data", "kandev.db")); err != nil {
		t.Fatal(err)
	}
	if r := watchdogd(t, []string{"KANDEV_HOME_DIR=" + home, "WATCHDOGD_DATABASE_URL="}, "scan"); r.code != 0 {
		t.Errorf("kandev's default location not used: %q", r.stderr)
	}
}
