package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ladderBomb is a config whose every value is valid: a policy anchored
// with 400 steps, then n policies that are aliases to it, each of which
// would decode the 400 steps again (28 KB for n = 1500, 63 KB for 4900).
func ladderBomb(n int) []byte {
	var b strings.Builder
	b.WriteString("policy: {stalled_turn: &p {steps: [")
	for i := range 400 {
		fmt.Fprintf(&b, "{after: %dm, action: slack}, ", i+1)
	}
	b.WriteString("]}")
	for i := range n {
		fmt.Fprintf(&b, ", x%d: *p", i)
	}
	b.WriteString("}\n")
	return []byte(b.String())
}

const aliasRefusal = "the file's aliases expand it too much"

// TestCheckConfigLadderBomb: check-config refuses a file whose aliases
// would expand it hundreds of times over with one FAILED line at the
// alias where decoding stopped, whatever each alias holds (here nothing
// wrong but its policy kind, which only validation refuses).
func TestCheckConfigLadderBomb(t *testing.T) {
	for _, n := range []int{1500, 4900} {
		text := ladderBomb(n)
		cfg := filepath.Join(t.TempDir(), "bomb.yaml")
		if err := os.WriteFile(cfg, text, 0o600); err != nil {
			t.Fatal(err)
		}
		r := watchdogd(t, nil, "check-config", cfg)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if r.code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "FAILED: "+cfg+":1: policy.x") || !strings.Contains(lines[0], aliasRefusal) {
			t.Fatalf("%d KB: exit %d, %d lines, the first %.300q", len(text)>>10, r.code, len(lines), lines[0])
		}
		t.Logf("%d KB, %d aliases to 400 steps: %s", len(text)>>10, n, lines[0][len(cfg)+8:])
	}
}

// TestReloadLadderBomb: the same files written over a running daemon's
// config and reloaded are refused (500, naming why) and leave the daemon
// running on its config, which reloads again afterwards; its peak RSS is
// logged as a figure.
func TestReloadLadderBomb(t *testing.T) {
	extra, base := daemonConfig(t, "")
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	d := e.startDaemon(base)
	waitFor(t, 20*time.Second, "ready", func() bool { code, _ := d.get("/readyz"); return code == 200 })
	for _, n := range []int{1500, 4900} {
		text := ladderBomb(n)
		if err := os.WriteFile(e.cfg, text, 0o600); err != nil {
			t.Fatal(err)
		}
		code, body := d.send(http.MethodPost, "/-/reload")
		if code != http.StatusInternalServerError || !strings.Contains(body, aliasRefusal) {
			t.Fatalf("%d KB: POST /-/reload answered %d %.300q", len(text)>>10, code, body)
		}
		if code, _ := d.get("/livez"); code != http.StatusOK {
			t.Fatalf("%d KB: /livez %d after the refused reload", len(text)>>10, code)
		}
		if d.metric(t, "watchdogd_config_last_reload_successful") != 0 {
			t.Errorf("%d KB: refused, but the reload metric says it took effect", len(text)>>10)
		}
	}
	writeConfigText(t, e, baseConfig)
	if code, body := d.send(http.MethodPost, "/-/reload"); code != http.StatusOK {
		t.Fatalf("the test's config: %d %q", code, body)
	}
	t.Logf("the daemon's peak RSS: %s", peakRSS(d.cmd.Process.Pid))
	d.terminate(t)
}

// peakRSS is a running process's VmHWM, as /proc says it.
func peakRSS(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err.Error()
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			return strings.Join(strings.Fields(l)[1:], " ")
		}
	}
	return "unknown"
}
