package pgtest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestOrphaned: only an owner file naming a process that is gone (or whose
// pid now belongs to a process started at another time) marks a directory
// as left behind; anything else is left alone.
func TestOrphaned(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	cases := []struct {
		name  string
		owner string // the owner file's content; "" for none
		want  bool
	}{
		{"no owner file: being set up, or not pgtest's", "", false},
		{"this process", ownerLine(self), false},
		{"this pid, started at another time: a reused pid", fmt.Sprintf("%d 1\n", self), true},
		{"a process that has exited", ownerLine(gone.Process.Pid), true},
		{"no start time recorded, owner alive", fmt.Sprintf("%d -\n", self), false},
		{"unreadable", "garbage\n", false},
		{"pid zero", "0 1\n", false},
	}
	for _, c := range cases {
		dir := t.TempDir()
		if c.owner != "" {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(c.owner), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := orphaned(dir); got != c.want {
			t.Errorf("%s (%q): orphaned = %v, want %v", c.name, c.owner, got, c.want)
		}
	}
}

// TestStartStopsWhatADeadProcessLeft: a test process that died without
// Close (here: a child that starts a server and a bouncer and exits) leaves
// both running; the next Start stops them and removes their files, and
// leaves a server whose owner still runs alone.
func TestStartStopsWhatADeadProcessLeft(t *testing.T) {
	if os.Getenv("PGTEST_LEAVE_BEHIND") == "1" {
		leaveBehind()
		return
	}
	t.Setenv("TEST_DATABASE_URL", "")
	live, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()

	child := exec.Command(os.Args[0], "-test.run=^TestStartStopsWhatADeadProcessLeft$")
	child.Env = append(os.Environ(), "PGTEST_LEAVE_BEHIND=1")
	out, err := child.Output()
	if err != nil {
		t.Fatalf("the child: %v\n%s", err, out)
	}
	var serverDir, bouncerDir string
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "LEFT" {
			serverDir, bouncerDir = f[1], f[2]
		}
	}
	if serverDir == "" {
		t.Fatalf("the child named no directories:\n%s", out)
	}
	postmaster := pidIn(t, filepath.Join(serverDir, "data", "postmaster.pid"))
	bouncer := pidIn(t, filepath.Join(bouncerDir, "pgbouncer.pid"))
	for _, pid := range []int{postmaster, bouncer} {
		if !running(pid) {
			t.Fatalf("process %d, left by the child, is not running: nothing to test", pid)
		}
	}

	next, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	for _, dir := range []string{serverDir, bouncerDir} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", dir, err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range []int{postmaster, bouncer} {
		for running(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if running(pid) {
			t.Errorf("process %d, left by the child, still runs", pid)
		}
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, live.DSN("postgres"))
	if err != nil {
		t.Fatalf("the server whose owner runs was stopped: %v", err)
	}
	_ = conn.Close(ctx)
}

// TestStartClearsAServerThatDiedWithItsOwner: a server that went down with
// its test process (a machine that went down) left a stale pid file, on
// which pg_ctl stop fails; its directory is removed all the same, rather
// than tried again by every later Start.
func TestStartClearsAServerThatDiedWithItsOwner(t *testing.T) {
	t.Setenv("TEST_DATABASE_URL", "")
	dead, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	postmaster := pidIn(t, filepath.Join(dead.dataDir, "postmaster.pid"))
	if err := syscall.Kill(postmaster, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); running(postmaster) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	owner := exec.Command("true")
	if err := owner.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead.dir, ownerFile), []byte(ownerLine(owner.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}

	next, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if _, err := os.Stat(dead.dir); !os.IsNotExist(err) {
		t.Errorf("%s, whose server and owner are gone, is still there (%v)", dead.dir, err)
	}
}

// TestSweepKeepsAServerItCouldNotStop: when pg_ctl cannot stop a left
// server that still runs, its directory is kept (its data and pid file are
// what a person needs to stop it by hand) and the sweep says so, instead of
// removing the files from under a live server. pg_ctl here is a script that
// refuses to stop and reports a server running, as it would for a server
// owned by a user the test may not signal.
func TestSweepKeepsAServerItCouldNotStop(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	bin := filepath.Join(tmp, "bin")
	// pg_ctl's mode is its last argument (the data directory's path, before
	// it, holds the test's name).
	script := "#!/bin/sh\nfor mode; do :; done\ncase $mode in\n" +
		"stop) echo 'pg_ctl: could not send stop signal: Operation not permitted'; exit 1;;\n" +
		"status) echo 'pg_ctl: server is running'; exit 0;;\nesac\nexit 2\n"
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "pg_ctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	owner := exec.Command("true")
	if err := owner.Run(); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(tmp, serverPrefix+"left")
	if err := os.MkdirAll(filepath.Join(left, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		ownerFile:                               ownerLine(owner.Process.Pid),
		filepath.Join("data", "postmaster.pid"): "4242\n",
	} {
		if err := os.WriteFile(filepath.Join(left, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	var said bytes.Buffer
	(&Server{binDir: bin}).reapOrphans(&said, syscall.Kill)
	out := said.String()
	if _, err := os.Stat(filepath.Join(left, "data", "postmaster.pid")); err != nil {
		t.Errorf("the directory of a server the sweep could not stop was removed: %v", err)
	}
	want := "could not be cleared: pg_ctl stop: exit status 1: pg_ctl: could not send stop signal: Operation not permitted"
	if !strings.Contains(out, left) || !strings.Contains(out, want) {
		t.Errorf("the sweep said %q, want a line naming %s and %q", out, left, want)
	}
}

// leaveBehind is the child's part: start a server and a bouncer, name their
// directories, and exit without closing either.
func leaveBehind() {
	srv, err := Start()
	if err != nil {
		fmt.Println("start:", err)
		os.Exit(1)
	}
	b, err := srv.StartBouncer("session", 1)
	if err != nil {
		fmt.Println("start bouncer:", err)
		os.Exit(1)
	}
	fmt.Println("LEFT", srv.dir, b.dir)
	os.Exit(0)
}

// pidIn is the pid on the first line of a pid file.
func pidIn(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return pid
}

// running reports whether pid is a process that has not exited (a zombie,
// exited and not yet reaped by its new parent, counts as exited).
func running(pid int) bool {
	f, err := procStat(pid)
	return err == nil && f[0] != "Z"
}

// TestSweepKeepsABouncerItCouldNotStop: when the kill of a left bouncer is
// refused, its directory (and pid file) is kept and the sweep says why; a
// bouncer that is already gone is cleared. The bouncer is a real process
// run on the directory's pgbouncer.ini, as the sweep checks; the refusal
// comes from kill, as it would for a process of another user.
func TestSweepKeepsABouncerItCouldNotStop(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	owner := exec.Command("true")
	if err := owner.Run(); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(tmp, bouncerPrefix+"left")
	if err := os.MkdirAll(left, 0o755); err != nil {
		t.Fatal(err)
	}
	// sh names the ini file as its $0, so it stands in /proc/pid/cmdline.
	bouncer := exec.Command("sh", "-c", "sleep 60", filepath.Join(left, "pgbouncer.ini"))
	if err := bouncer.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bouncer.Process.Kill(); _ = bouncer.Wait() }()
	for name, content := range map[string]string{
		ownerFile:       ownerLine(owner.Process.Pid),
		"pgbouncer.pid": strconv.Itoa(bouncer.Process.Pid) + "\n",
	} {
		if err := os.WriteFile(filepath.Join(left, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Start returns once the exec is under way, but the kernel sets up the
	// new command line a moment later: until then it reads empty, and the
	// sweep would rightly take the pid for another process. So wait until
	// the sweep's own test (bouncerIn) knows the stand-in.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, ok := bouncerIn(left); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s the stand-in bouncer (pid %d) is still not taken for one run on %s", bouncer.Process.Pid, left)
		}
	}

	var said bytes.Buffer
	refuse := func(int, syscall.Signal) error { return syscall.EPERM }
	(&Server{}).reapOrphans(&said, refuse)
	if _, err := os.Stat(filepath.Join(left, "pgbouncer.pid")); err != nil {
		t.Errorf("the directory of a bouncer the sweep could not stop was removed: %v", err)
	}
	want := fmt.Sprintf("could not be cleared: kill pgbouncer %d: operation not permitted", bouncer.Process.Pid)
	if out := said.String(); !strings.Contains(out, left) || !strings.Contains(out, want) {
		t.Errorf("the sweep said %q, want a line naming %s and %q", out, left, want)
	}

	said.Reset()
	gone := func(int, syscall.Signal) error { return syscall.ESRCH }
	(&Server{}).reapOrphans(&said, gone)
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("%s, whose bouncer is gone, is still there (%v); the sweep said %q", left, err, said.String())
	}
}
