package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckConfigNamesUnreadFiles: a config whose kandev.token_file names
// a file that is not there (a chart pointing at a key its Secret lacks)
// passes check-config, which says it did not read the file, and the
// daemon stops at start on that file; with the file there, check-config
// prints SUCCESS alone and the daemon runs.
func TestCheckConfigNamesUnreadFiles(t *testing.T) {
	e := newEnv(t, world(time.Now()), "sqlite", "")
	token := filepath.Join(e.dir, "kandev-token")
	if err := os.Remove(token); err != nil {
		t.Fatal(err)
	}
	r := watchdogd(t, e.environ(), "check-config", e.cfg)
	want := "SUCCESS: " + e.cfg + "\nnot read: " + token + " (kandev.token_file: no such file or directory)\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("check-config without the token file: exit %d\n got %q\nwant %q", r.code, r.stdout, want)
	}
	r = watchdogd(t, e.environ(), "run", "--once", "--config", e.cfg)
	if r.code != 1 || !strings.Contains(r.stderr, "kandev.token_file: read secret file") || !strings.Contains(r.stderr, token) {
		t.Fatalf("run --once without the token file: exit %d: %s", r.code, r.stderr)
	}
	if err := os.WriteFile(token, []byte(kandevToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := watchdogd(t, e.environ(), "check-config", e.cfg); r.code != 0 || r.stdout != "SUCCESS: "+e.cfg+"\n" {
		t.Fatalf("check-config with the token file: exit %d %q", r.code, r.stdout)
	}
	e.once()
}

// TestCheckConfigWebhookSecret: a webhook secret file that holds no
// Standard Webhooks secret (a bare key, not whsec_ and base64) is named
// by check-config with why, and the daemon stops at start on it rather
// than retry every step forever; a good one passes both.
func TestCheckConfigWebhookSecret(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "hook")
	e := newEnv(t, world(time.Now()), "sqlite", "webhooks:\n  - {name: hook, url: http://127.0.0.1:1/hook, secret_file: "+secret+", timeout: 1s}\n")
	if err := os.WriteFile(secret, []byte("s3cr3t-not-whsec\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := watchdogd(t, e.environ(), "check-config", e.cfg)
	want := "SUCCESS: " + e.cfg + "\nnot read: " + secret + " (webhooks[0].secret_file: not a Standard Webhooks secret (whsec_ and the key in base64))\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("check-config with a bad webhook secret: exit %d\n got %q\nwant %q", r.code, r.stdout, want)
	}
	r = watchdogd(t, e.environ(), "run", "--once", "--config", e.cfg)
	if r.code != 1 || !strings.Contains(r.stderr, "webhooks hook: secret_file "+secret+": not a Standard Webhooks secret") || strings.Contains(r.stderr, "s3cr3t") {
		t.Fatalf("run --once with a bad webhook secret: exit %d: %s", r.code, r.stderr)
	}
	if err := os.WriteFile(secret, []byte("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := watchdogd(t, e.environ(), "check-config", e.cfg); r.code != 0 || r.stdout != "SUCCESS: "+e.cfg+"\n" {
		t.Fatalf("check-config with a good webhook secret: exit %d %q", r.code, r.stdout)
	}
	e.once()
}

// TestCheckConfigWarnsOfALadder: check-config says SUCCESS for a ladder
// whose later Slack step is due together with the first (10m, at or below
// stall_after's 15m), and warns, saying the first is never sent; Slack now
// and Alertmanager a second later is no warning: both go out.
func TestCheckConfigWarnsOfALadder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ladder.yaml")
	body := `slack:
  token_file: /dev/null
  default_channel: C1
alertmanager:
  urls: ["http://127.0.0.1:9093"]
policy:
  stalled_turn:
    steps:
      - {after: 0s, action: slack}
      - {after: 1s, action: alertmanager}
      - {after: 10m, action: slack, mention: true}
`
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	r := watchdogd(t, nil, "check-config", file)
	want := "SUCCESS: " + file + "\nwarning: " + file + ":11: policy.stalled_turn.steps[2].after: 10m is at or below thresholds.stall_after (15m), " +
		"and after counts from when the condition began: it is due as soon as the episode opens, together with steps[0] (both to Slack), " +
		"and only steps[2] is sent there: steps[0] never is; raise this after above 15m to send both\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("check-config: exit %d\n got %q\nwant %q", r.code, r.stdout, want)
	}
	if err := os.WriteFile(file, []byte(strings.TrimSuffix(body, "      - {after: 10m, action: slack, mention: true}\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := watchdogd(t, nil, "check-config", file); r.code != 0 || r.stdout != "SUCCESS: "+file+"\n" {
		t.Fatalf("check-config without the mention: exit %d\n%s", r.code, r.stdout)
	}
}
