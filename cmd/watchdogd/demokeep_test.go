package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDemoKeepThenRun: the path from the demo to a running daemon.
// `watchdogd demo --keep DIR` leaves the demo database and a config, says
// what to run next, and `watchdogd run --config DIR/watchdogd.yaml`, from
// any working directory, serves the status page with the demo's findings
// and writes each Slack step to its log (no slack: block). A second demo
// into the same directory is refused: it would mix two demos' episodes.
func TestDemoKeepThenRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	r := watchdogd(t, nil, "demo", "--keep", dir)
	cfgFile := filepath.Join(dir, "watchdogd.yaml")
	if r.code != 0 || !strings.Contains(r.stdout, "watchdogd run --config "+cfgFile) || !strings.Contains(r.stdout, "http://127.0.0.1:9464/") {
		t.Fatalf("demo --keep: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, f := range []string{"kandev.db", "watchdogd.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("demo --keep left no %s: %v", f, err)
		}
	}
	if r := watchdogd(t, nil, "check-config", cfgFile); r.code != 0 || strings.TrimSpace(r.stdout) != "SUCCESS: "+cfgFile {
		t.Fatalf("check-config on the kept config: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The config serves on the port the README and the output name; the
	// test moves it to a free one (another test or process may hold 9464),
	// and changes nothing else.
	b, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	const listen = "\n  listen: 127.0.0.1:9464\n"
	if strings.Count(string(b), listen) != 1 {
		t.Fatalf("the kept config does not listen on 127.0.0.1:9464:\n%s", b)
	}
	port := freePort(t)
	if err := os.WriteFile(cfgFile, []byte(strings.Replace(string(b), listen, fmt.Sprintf("\n  listen: 127.0.0.1:%d\n", port), 1)), 0o644); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(binary, "run", "--config", cfgFile)
	cmd.Dir = t.TempDir() // the kept paths are absolute: any working directory works
	out := newSyncBuffer()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemonProc{cmd: cmd, out: out, base: fmt.Sprintf("http://127.0.0.1:%d", port), done: make(chan error, 1)}
	go func() { d.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-d.done
		checkRaces(t, out.String())
		if t.Failed() {
			t.Logf("daemon output:\n%s", out.String())
		}
	})
	waitFor(t, 20*time.Second, "/readyz 200", func() bool { code, _ := d.get("/readyz"); return code == 200 })
	d.waitView(t)
	code, page := d.get("/")
	// The demo's stalled session, by its task's title, and its kind.
	if code != 200 || !strings.Contains(page, "Fix login redirect") || !strings.Contains(page, "stalled_turn") {
		t.Fatalf("status page %d:\n%.2000s", code, page)
	}
	waitFor(t, 20*time.Second, "Slack steps in the log", func() bool { return len(logLines(out.String(), `"watchdogd finding"`)) >= 8 })
	if len(logLines(out.String(), "no slack: block")) != 1 {
		t.Errorf("no warning that Slack steps go to the log:\n%s", out.String())
	}
	d.terminate(t)

	r = watchdogd(t, nil, "demo", "--keep", dir)
	if r.code != 1 || !strings.Contains(r.stderr, filepath.Join(dir, "kandev.db")+" already exists") {
		t.Fatalf("a second demo into %s: exit %d\n%s%s", dir, r.code, r.stdout, r.stderr)
	}
}

// TestDemoJSON: `demo --output json` prints the report alone, so a script
// can read it.
func TestDemoJSON(t *testing.T) {
	r := watchdogd(t, nil, "demo", "--output", "json")
	var rep struct {
		SchemaVersion int `json:"schema_version"`
		Findings      []json.RawMessage
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil || rep.SchemaVersion != 1 || len(rep.Findings) == 0 {
		t.Fatalf("demo --output json: exit %d, %v\n%.500s", r.code, err, r.stdout)
	}
}
