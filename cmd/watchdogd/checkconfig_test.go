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
