package pgtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Every server's and bouncer's directory holds an owner file naming the
// process that started it: its pid and its start time, which tells a live
// owner from a later process that got the same pid. A process that dies
// without Close leaves its server running: a fuzzing worker its coordinator
// stopped, a test binary panicking at its -timeout, a developer's ^C, a
// killed benchmark holding gigabytes. The next server a test process starts
// stops those whose owner is gone, and removes their files.
const (
	ownerFile     = "owner"
	serverPrefix  = "watchdogd-pgtest-"
	bouncerPrefix = "watchdogd-pgbouncer-"
)

// ownerLine identifies process pid: "pid start\n", start being field 22 of
// /proc/pid/stat (clock ticks after boot). Without /proc it is "pid -".
func ownerLine(pid int) string {
	start, err := startTime(pid)
	if err != nil {
		start = "-"
	}
	return fmt.Sprintf("%d %s\n", pid, start)
}

func startTime(pid int) (string, error) {
	f, err := procStat(pid)
	if err != nil {
		return "", err
	}
	return f[19], nil
}

// procStat is /proc/pid/stat from field 3 (the state) on: the command
// name, field 2, is in parentheses and may hold spaces and parentheses
// itself, so the fields are those after its last ')'.
func procStat(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return nil, fmt.Errorf("/proc/%d/stat: %d fields after the command name, want 20 or more", pid, len(f))
	}
	return f, nil
}

// writeOwner records this process as dir's owner.
func writeOwner(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(ownerLine(os.Getpid())), 0o644); err != nil {
		return fmt.Errorf("record the test server's owner: %w", err)
	}
	return nil
}

// orphaned reports whether dir's owner file names a process that no longer
// runs. A directory without one (still being set up, or not made by
// pgtest) is never orphaned.
func orphaned(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return false
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	start, err := startTime(pid)
	return err == nil && f[1] != "-" && start != f[1]
}

// reapOrphans stops the servers and bouncers in the temp directory whose
// owner is gone, removes their files, and says what it did on w (the test
// process's stderr). kill signals a bouncer (syscall.Kill but in tests).
func (s *Server) reapOrphans(w io.Writer, kill func(pid int, sig syscall.Signal) error) {
	bouncers, _ := filepath.Glob(filepath.Join(os.TempDir(), bouncerPrefix+"*"))
	for _, dir := range bouncers {
		if orphaned(dir) {
			reported(w, "PgBouncer", dir, stopBouncerIn(dir, kill))
		}
	}
	servers, _ := filepath.Glob(filepath.Join(os.TempDir(), serverPrefix+"*"))
	for _, dir := range servers {
		if !orphaned(dir) {
			continue
		}
		left := &Server{binDir: s.binDir, cred: s.cred, dir: dir, dataDir: filepath.Join(dir, "data"), owned: true}
		var stopErr error
		if _, err := os.Stat(filepath.Join(left.dataDir, "postmaster.pid")); err == nil {
			if out, err := left.run("pg_ctl", "-D", left.dataDir, "-m", "immediate", "-w", "stop"); err != nil && !left.gone() {
				stopErr = fmt.Errorf("pg_ctl stop: %w: %s", err, strings.TrimSpace(string(out)))
			}
		}
		reported(w, "PostgreSQL", dir, stopErr)
	}
}

// gone reports whether no server runs on s's data directory. A stop fails
// when the server is already gone and left a stale pid file (a SIGKILL, a
// machine that went down); pg_ctl status then exits 3, "no server running".
func (s *Server) gone() bool {
	_, err := s.run("pg_ctl", "-D", s.dataDir, "status")
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == 3
}

// reported removes a left server's or bouncer's directory and says so on
// w, or says what failed: a leftover is a symptom worth seeing in a test
// log.
func reported(w io.Writer, what, dir string, stopErr error) {
	err := stopErr
	if err == nil {
		err = os.RemoveAll(dir)
	}
	if err != nil {
		fmt.Fprintf(w, "pgtest: a %s whose test process had gone, in %s, could not be cleared: %v\n", what, dir, err)
		return
	}
	fmt.Fprintf(w, "pgtest: stopped a %s whose test process had gone, and removed %s\n", what, dir)
}

// stopBouncerIn kills the pgbouncer whose pid file is in dir, if there
// is one. It fails only when that process lives on and could not be
// killed, so that its pid file, what a person needs to stop it, is kept.
func stopBouncerIn(dir string, kill func(pid int, sig syscall.Signal) error) error {
	pid, ok := bouncerIn(dir)
	if !ok {
		return nil
	}
	if err := kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill pgbouncer %d: %w", pid, err)
	}
	return nil
}

// bouncerIn is the pid in dir's pid file, if the process of that pid is
// still the one run on dir's configuration (a pid can be reused): without
// a pid file or such a process there is nothing to stop.
func bouncerIn(dir string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "pgbouncer.pid"))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return pid, err == nil && bytes.Contains(cmdline, []byte(filepath.Join(dir, "pgbouncer.ini")))
}
