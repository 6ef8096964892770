package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

// TestLedgerPathRefusedAtStart: a SQLite ledger that cannot be created
// where state.url says (a directory given as the file, a path through a
// file, a directory watchdogd's user may not write) stops `run` and
// `run --once` at start, within seconds, with one error that says what to
// change and names the config line state.url is set at; the daemon never
// serves, rather than failing every cycle.
func TestLedgerPathRefusedAtStart(t *testing.T) {
	shared, err := os.MkdirTemp("", "watchdogd-ledgerpath-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(shared) })
	_ = os.Chmod(shared, 0o755)
	// The binary and the files it reads, where an unprivileged user
	// reaches them (t.TempDir's parent is 0700).
	bin := filepath.Join(shared, "watchdogd")
	if out, err := exec.Command("cp", binary, bin).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	kdb, err := kandevdb.CreateSQLite(filepath.Join(shared, "kandev.db"), kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = kdb.Close()
	dir := filepath.Join(shared, "statedir")
	locked := filepath.Join(shared, "locked")
	for _, d := range []string{dir, locked} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(shared, "afile")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, state, want string
		unprivileged      bool
	}{
		{"a directory", dir, "ledger sqlite://" + dir + ": " + dir + " is a directory; name the ledger's file in it: sqlite://" + dir + "/state.db", false},
		{"through a file", file + "/state.db", "ledger sqlite://" + file + "/state.db: " + file + " is a file, not a directory the ledger can be made in", false},
		// 0755 and root's: another user may not write it.
		{"an unwritable directory", locked + "/new/state.db", "ledger sqlite://" + locked + "/new/state.db: cannot create it: directory " + locked +
			" is not writable by uid 65534 (permission denied); point state.url at a writable volume or make " + locked + " writable by uid 65534", true},
	} {
		cfg := filepath.Join(shared, "watchdogd.yaml")
		text := fmt.Sprintf("database:\n  url: sqlite://%s/kandev.db\nschedule: \"@every 1s\"\nstate:\n  url: sqlite://%s\nhttp:\n  listen: 127.0.0.1:%d\n", shared, c.state, freePort(t))
		if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		want := c.want + " (URL from state.url at " + cfg + ":5)"
		for _, args := range [][]string{{"run"}, {"run", "--once"}} {
			argv := append(append([]string{bin}, args...), "--config", cfg)
			if c.unprivileged {
				if os.Geteuid() != 0 {
					// Not root: this user may not write a directory taken from it.
					_ = os.Chmod(locked, 0o555)
					want = strings.ReplaceAll(want, "uid 65534", fmt.Sprintf("uid %d", os.Geteuid()))
				} else {
					argv = append([]string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"}, argv...)
				}
			}
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = append(os.Environ(), "WATCHDOGD_DATABASE_URL=", "WATCHDOGD_CONFIG=", "HOME="+shared)
			cmd.Dir = shared
			start := time.Now()
			timer := time.AfterFunc(20*time.Second, func() { _ = cmd.Process.Kill() })
			out, err := cmd.CombinedOutput()
			timer.Stop()
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			last := lines[len(lines)-1]
			if err == nil || !strings.HasSuffix(last, want) || strings.Contains(string(out), "watchdogd started") || time.Since(start) > 15*time.Second {
				t.Errorf("%s, %v: %v after %s, want the last line to end %q:\n%s", c.name, args, err, time.Since(start).Round(time.Millisecond), want, out)
			}
		}
		if entries, _ := os.ReadDir(locked); len(entries) != 0 {
			t.Errorf("%s: made %v in the directory it refused", c.name, entries)
		}
	}
}
