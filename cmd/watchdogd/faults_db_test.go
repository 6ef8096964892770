//go:build faults

package main

// The fault suite's database faults: kandev's PostgreSQL and the ledger's
// going away, a read-only ledger file, a locked kandev file.

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/pgtest"
)

// pgDatabase starts a PostgreSQL server of the test's own (the outage
// tests stop and restart it) with one fresh database, closed when the test
// and its daemons are done.
func pgDatabase(t *testing.T, name string) (*pgtest.Server, string) {
	t.Helper()
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	dsn, err := srv.NewDatabase(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return srv, dsn
}

// TestFaultKandevPostgresOutage: kandev's PostgreSQL stops while the daemon
// runs. The process stays up, logs once per change of error, /readyz fails
// within two cycles, scans_total{result="error"} rises, the first cycle
// after the restart succeeds, and what came due meanwhile is sent once.
func TestFaultKandevPostgresOutage(t *testing.T) {
	ctx := context.Background()
	srv, dsn := pgDatabase(t, "kandev")
	ds := world(time.Now())
	lateQuestion(&ds, "sess-late", *outage/2+5*time.Second)
	db, err := kandevdb.CreatePostgres(ctx, dsn, kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Write(ctx, ds); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	extra, base := daemonConfig(t, "")
	e := newEnv(t, kandevdb.Dataset{}, "sqlite", extra)
	e.slack.SetFault(nil)
	// kandev's database is the PostgreSQL one, from the environment.
	e.vars["extra"] = extra
	writeConfigText(t, e, strings.Replace(baseConfig, "  url: sqlite://{{.dir}}/kandev.db\n", "", 1))
	d := e.startDaemon(base, "WATCHDOGD_DATABASE_URL="+dsn)
	waitFor(t, 20*time.Second, "ready", func() bool { code, _ := d.get("/readyz"); return code == 200 })
	waitFor(t, 20*time.Second, "first posts", func() bool { return len(e.slack.Messages()) >= 8 })
	before := d.metric(t, `watchdogd_scans_total{result="error"}`)
	stopped := time.Now()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Second+time.Second, "/readyz failing within two cycles", func() bool { code, _ := d.get("/readyz"); return code == 503 })
	unready := time.Since(stopped)
	time.Sleep(*outage - time.Since(stopped))
	failedCycles := d.metric(t, `watchdogd_scans_total{result="error"}`) - before
	if postsFor(e, "Late question") != 0 {
		t.Fatal("posted during the outage")
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	waitFor(t, 20*time.Second, "ready again", func() bool { code, _ := d.get("/readyz"); return code == 200 })
	recovered := time.Since(restarted)
	waitFor(t, 20*time.Second, "the question due during the outage", func() bool { return postsFor(e, "Late question") == 1 })
	time.Sleep(3 * time.Second)
	if n := postsFor(e, "Late question"); n != 1 {
		t.Fatalf("the late question was posted %d times", n)
	}
	if d.cmd.ProcessState != nil {
		t.Fatal("the daemon exited")
	}
	errorLines := len(logLines(d.out.String(), `"msg":"cycle failed"`))
	if failedCycles < 5 || errorLines > 4 || float64(errorLines) > failedCycles/3 {
		t.Fatalf("%v failed cycles logged %d error lines: want one per change of error", failedCycles, errorLines)
	}
	if len(logLines(d.out.String(), "cycle recovered")) < 1 {
		t.Fatal("no recovery logged")
	}
	e.exactlyOnce()
	figure(t, "outage %s: unready after %s, %v failed cycles, %d error log lines, ready %s after restart, late question sent once",
		outage.String(), unready.Round(100*time.Millisecond), failedCycles, errorLines, recovered.Round(100*time.Millisecond))
}

// TestFaultLedgerPostgresOutage: the PostgreSQL ledger stops: nothing is
// sent that is not recorded first; delivery resumes without duplicates.
func TestFaultLedgerPostgresOutage(t *testing.T) {
	srv, ledgerURL := pgDatabase(t, "ledger")
	ds := world(time.Now())
	lateQuestion(&ds, "sess-late", *outage/2+5*time.Second)
	extra, base := daemonConfig(t, "")
	e := newEnv(t, ds, ledgerURL, extra)
	d := e.startDaemon(base)
	waitFor(t, 20*time.Second, "first posts", func() bool { return len(e.slack.Messages()) == 8 })
	// The eighth post can land before its cycle has read the gauges back
	// from the ledger: stop only after a whole cycle, which the check of
	// the cycle timestamp below counts on.
	waitFor(t, 20*time.Second, "a whole cycle", func() bool {
		return d.metric(t, "watchdogd_last_successful_cycle_timestamp_seconds") > 0
	})
	stopped := time.Now()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "/readyz failing", func() bool { code, _ := d.get("/readyz"); return code == 503 })
	time.Sleep(*outage - time.Since(stopped))
	if n := postsFor(e, "Late question"); n != 0 {
		t.Fatalf("%d posts while the ledger was down: sent without a record", n)
	}
	// Scans went on; no cycle completed (WatchdogdLedgerFailing, not
	// WatchdogdScanFailing). A cycle under way at the stop may finish.
	stop := float64(stopped.Unix())
	if scanned, cycled := d.metric(t, "watchdogd_last_successful_scan_timestamp_seconds"), d.metric(t, "watchdogd_last_successful_cycle_timestamp_seconds"); scanned < stop+2 || cycled <= 0 || cycled > stop+2 {
		t.Fatalf("ledger down since %v: last successful scan %v, cycle %v", stop, scanned, cycled)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the late question", func() bool { return postsFor(e, "Late question") == 1 })
	time.Sleep(3 * time.Second)
	if posts := e.exactlyOnce(); posts != 9 {
		t.Fatalf("%d posts", posts)
	}
	figure(t, "ledger down %s: 0 posts while down, the late question sent once after", outage.String())
}

// TestFaultLedgerSQLiteReadOnly: a SQLite ledger the daemon cannot write
// (an unprivileged daemon; root ignores file modes): nothing is sent;
// once writable, each due step is sent once.
func TestFaultLedgerSQLiteReadOnly(t *testing.T) {
	shared, err := os.MkdirTemp("", "watchdogd-ro-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(shared) }()
	_ = os.Chmod(shared, 0o777)
	bin := filepath.Join(shared, "watchdogd")
	if out, err := exec.Command("cp", binary, bin).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	ds := world(time.Now())
	extra, base := daemonConfig(t, "")
	e := newEnv(t, ds, "sqlite", extra)
	// The unprivileged daemon reads kandev's file (and writes its -shm),
	// the config and the token: open t.TempDir()'s 0700 parent to it.
	for _, p := range []string{filepath.Dir(e.dir), e.dir, filepath.Join(e.dir, "kandev.db"), filepath.Join(e.dir, "kandev-token")} {
		_ = os.Chmod(p, 0o777)
	}
	stateDir := filepath.Join(shared, "state")
	if err := os.Mkdir(stateDir, 0o777); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(stateDir, 0o777) // past the umask
	e.state = "sqlite://" + filepath.Join(stateDir, "state.db")
	e.vars["state"] = e.state
	e.writeConfig()
	_ = os.Chmod(e.cfg, 0o644)
	prefix := []string{}
	if os.Geteuid() == 0 {
		prefix = []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"}
	}
	run := func(env []string, args ...string) (*exec.Cmd, *syncBuffer) {
		all := append(append([]string{}, prefix...), append([]string{bin}, args...)...)
		cmd := exec.Command(all[0], all[1:]...)
		cmd.Env = append(append(os.Environ(), e.environ()...), env...)
		out := newSyncBuffer()
		cmd.Stdout, cmd.Stderr = out, out
		return cmd, out
	}
	// Create the ledger as the daemon's user, by a cycle on a kandev with
	// nothing to find (a dry run makes no ledger), then take write access
	// away.
	empty, err := kandevdb.CreateSQLite(filepath.Join(shared, "empty-kandev.db"), kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = empty.Close()
	_ = os.Chmod(filepath.Join(shared, "empty-kandev.db"), 0o666)
	init, out := run([]string{"WATCHDOGD_DATABASE_URL=sqlite://" + filepath.Join(shared, "empty-kandev.db")}, "run", "--once", "--config", e.cfg)
	if err := init.Run(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := os.Chmod(filepath.Join(stateDir, "state.db"), 0o444); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(stateDir, 0o555)
	cmd, dout := run(nil, "run", "--config", e.cfg)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); checkRaces(t, dout.String()) }()
	d := &daemonProc{cmd: cmd, out: dout, base: base}
	waitFor(t, 20*time.Second, "failing cycles", func() bool { return len(logLines(dout.String(), "cycle failed")) >= 1 })
	time.Sleep(3 * time.Second)
	if n := len(e.slack.Messages()); n != 0 {
		t.Fatalf("%d posts with a read-only ledger: sent without a record\n%s", n, dout.String())
	}
	if code, _ := d.get("/readyz"); code != 503 {
		t.Fatal("ready with a read-only ledger")
	}
	// kandev is read; the cycle fails at the ledger. The metrics tell the
	// two apart, so the alert that fires is WatchdogdLedgerFailing.
	if scanned, cycled := d.metric(t, "watchdogd_last_successful_scan_timestamp_seconds"), d.metric(t, "watchdogd_last_successful_cycle_timestamp_seconds"); scanned <= 0 || cycled != 0 {
		t.Fatalf("read-only ledger: last successful scan %v, cycle %v", scanned, cycled)
	}
	_ = os.Chmod(stateDir, 0o777)
	_ = os.Chmod(filepath.Join(stateDir, "state.db"), 0o666)
	waitFor(t, 30*time.Second, "posts once writable", func() bool { return len(e.slack.Messages()) == 8 })
	waitFor(t, 10*time.Second, "a successful cycle", func() bool {
		return d.metric(t, "watchdogd_last_successful_cycle_timestamp_seconds") > 0
	})
	time.Sleep(3 * time.Second)
	if posts := e.exactlyOnce(); posts != 8 {
		t.Fatalf("%d posts", posts)
	}
	figure(t, "read-only SQLite ledger (daemon as uid %d): 0 posts while read-only, 8 once writable, no duplicates", map[bool]int{true: 65534, false: os.Geteuid()}[os.Geteuid() == 0])
}

// TestFaultSQLiteLocked: a kandev writer holding an exclusive lock makes
// the busy timeout apply and the cycle fail cleanly; the next succeeds once
// it lets go. An ordinary writer's long transaction does not block the
// scan (WAL mode).
func TestFaultSQLiteLocked(t *testing.T) {
	extra, base := daemonConfig(t, "")
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	writeConfigText(t, e, strings.Replace(baseConfig, "  url: sqlite://{{.dir}}/kandev.db\n", "  url: sqlite://{{.dir}}/kandev.db\n  busy_timeout: 500ms\n", 1))
	d := e.startDaemon(base)
	waitFor(t, 20*time.Second, "ready", func() bool { code, _ := d.get("/readyz"); return code == 200 })
	// An ordinary long write transaction: scans go on.
	w := e.kandev.DB()
	tx, err := w.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`UPDATE tasks SET title = title || '' WHERE id = 'task-sess-busy'`); err != nil {
		t.Fatal(err)
	}
	ok := d.metric(t, `watchdogd_scans_total{result="success"}`)
	waitFor(t, 10*time.Second, "scans during a long write", func() bool { return d.metric(t, `watchdogd_scans_total{result="success"}`) >= ok+3 })
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	_ = e.kandev.Close()
	// An exclusive lock, taken between two cycles (watchdogd keeps no
	// connection open between reads): scans fail after the busy timeout,
	// cleanly.
	lock, err := sql.Open("sqlite", "file:"+filepath.Join(e.dir, "kandev.db")+"?_pragma=busy_timeout(10000)&_pragma=locking_mode(EXCLUSIVE)")
	if err != nil {
		t.Fatal(err)
	}
	lock.SetMaxOpenConns(1)
	ltx, err := lock.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ltx.Exec(`UPDATE tasks SET title = title WHERE id = 'task-sess-busy'`); err != nil {
		t.Fatal(err)
	}
	if err := ltx.Commit(); err != nil { // exclusive mode keeps the lock after commit
		t.Fatal(err)
	}
	errs := d.metric(t, `watchdogd_scans_total{result="error"}`)
	waitFor(t, 15*time.Second, "failed scans under the lock", func() bool { return d.metric(t, `watchdogd_scans_total{result="error"}`) >= errs+2 })
	if !strings.Contains(d.out.String(), "locked") && !strings.Contains(d.out.String(), "busy") {
		t.Fatalf("the failure does not say the database is locked:\n%s", d.out.String())
	}
	_ = lock.Close()
	ok = d.metric(t, `watchdogd_scans_total{result="success"}`)
	waitFor(t, 10*time.Second, "scans after the lock", func() bool { return d.metric(t, `watchdogd_scans_total{result="success"}`) >= ok+2 })
	e.exactlyOnce()
	figure(t, "exclusive lock: cycles failed after busy_timeout 500ms and recovered; a long write transaction did not block scans")
}
