package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReloadKeepsOldConfigWhenInvalid: SIGHUP with an invalid file keeps the
// old config running and sets the reload metric to 0; a valid one applies.
func TestReloadKeepsOldConfigWhenInvalid(t *testing.T) {
	extra, base := daemonConfig(t, "")
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	d := e.startDaemon(base)
	waitFor(t, 20*time.Second, "ready", func() bool { code, _ := d.get("/readyz"); return code == 200 })
	if err := os.WriteFile(e.cfg, []byte("thresholds:\n  stall_after: soon\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, 10*time.Second, "reload metric 0", func() bool { return d.metric(t, "watchdogd_config_last_reload_successful") == 0 })
	scans := d.metric(t, `watchdogd_scans_total{result="success"}`)
	waitFor(t, 10*time.Second, "cycles going on", func() bool { return d.metric(t, `watchdogd_scans_total{result="success"}`) >= scans+2 })
	if code, _ := d.get("/readyz"); code != 200 {
		t.Fatal("not ready on the old config")
	}
	if n := len(logLines(d.out.String(), "config reload failed")); n != 1 {
		t.Fatalf("%d reload failure lines", n)
	}
	// POST /-/reload answers with the outcome; other methods are refused.
	if code, body := d.send(http.MethodPost, "/-/reload"); code != 500 || !strings.Contains(body, "thresholds.stall_after") {
		t.Fatalf("POST /-/reload of an invalid file: %d %q", code, body)
	}
	if code, _ := d.get("/-/reload"); code != http.StatusMethodNotAllowed {
		t.Fatalf("GET /-/reload: %d, want 405", code)
	}
	writeConfigText(t, e, baseConfig)
	e.vars["extra"] = extra
	writeConfigText(t, e, baseConfig)
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, 10*time.Second, "reload metric 1", func() bool { return d.metric(t, "watchdogd_config_last_reload_successful") == 1 })
	if code, body := d.send(http.MethodPut, "/-/reload"); code != 200 || body != "config reloaded\n" {
		t.Fatalf("PUT /-/reload of a valid file: %d %q", code, body)
	}
	// The log reaches the test through a pipe, a moment after the answer.
	waitFor(t, 5*time.Second, "two reload lines (SIGHUP, then PUT)", func() bool {
		return len(logLines(d.out.String(), "config reloaded")) == 2
	})
}

// TestRotatedTokenFile: a bot token rotated in its file (as a Kubernetes
// Secret is, in place) is used from the next cycle on, with no restart and
// no SIGHUP: the old token is revoked once the daemon has read the new
// one, and the resolves that follow still land. A file that goes missing
// keeps the token read before, logged once.
func TestRotatedTokenFile(t *testing.T) {
	extra, base := daemonConfig(t, "")
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	tokenFile := filepath.Join(e.dir, "slack-token")
	writeAtomically(t, tokenFile, slackToken+"\n")
	cfg, err := os.ReadFile(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg = bytes.Replace(cfg, []byte("  timeout: 1s\n"), []byte("  timeout: 1s\n  token_file: "+tokenFile+"\n"), 1)
	if err := os.WriteFile(e.cfg, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	d := e.startDaemon(base, "WATCHDOGD_SLACK_TOKEN=")
	waitFor(t, 20*time.Second, "8 posts", func() bool { return len(e.slack.Messages()) == 8 })

	// The file first, then Slack revokes the old token once the daemon
	// has read the new one. Revoking first would let a cycle that began
	// before the file changed send with the old token, which Slack
	// refuses for good (invalid_auth is permanent): a race in the test,
	// not the rotation it checks.
	const rotated = "xoxb-rotated-token-do-not-log"
	writeAtomically(t, tokenFile, rotated+"\n")
	waitFor(t, 10*time.Second, "the daemon to read the new token", func() bool {
		return len(logLines(d.out.String(), `"changed":["slack token"]`)) == 1
	})
	e.slack.SetToken(rotated)
	if _, err := e.kandev.DB().Exec(`UPDATE task_session_messages SET metadata = json_set(metadata, '$.status', 'answered') WHERE type = 'clarification_request'`); err != nil {
		t.Fatal(err)
	}
	cleared := func() int {
		n := 0
		for _, m := range e.slack.Messages() {
			if strings.Contains(m.Text, "Cleared after") {
				n++
			}
		}
		return n
	}
	waitFor(t, 20*time.Second, "the answered questions' messages edited", func() bool { return cleared() >= 2 })
	if n := len(logLines(d.out.String(), `"changed":["slack token"]`)); n != 1 {
		t.Errorf("%d log lines about the changed token, want 1", n)
	}

	if err := os.Remove(tokenFile); err != nil {
		t.Fatal(err)
	}
	scans := d.metric(t, `watchdogd_scans_total{result="success"}`)
	waitFor(t, 10*time.Second, "cycles going on", func() bool { return d.metric(t, `watchdogd_scans_total{result="success"}`) >= scans+3 })
	if n := len(logLines(d.out.String(), "cannot read a secret or URL file again")); n != 1 {
		t.Errorf("%d warnings about the missing file, want 1", n)
	}
	_, metrics := d.get("/metrics")
	for _, l := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(l, "watchdogd_actions_total{") && strings.Contains(l, `result="failed"`) && !strings.HasSuffix(l, " 0") {
			t.Errorf("an action failed: %s", l)
		}
	}
	if out := d.out.String(); strings.Contains(out, rotated) || strings.Contains(out, slackToken) {
		t.Error("a token reached the log")
	}
}

// writeAtomically replaces path as kubelet updates a mounted Secret: the
// new content appears whole, never half-written.
func writeAtomically(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
