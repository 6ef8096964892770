package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNotifyTestWithoutToken: notify-test with no Slack token (the
// environment variable unset, the token file empty) says so
// in one line naming both sources, and sends nothing, rather than
// passing Slack's not_authed on.
func TestNotifyTestWithoutToken(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "slack-token")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct{ slack, want string }{
		"empty file": {"  token_file: " + empty + "\n", "slack.token_file " + empty + " is empty"},
	} {
		cfg := filepath.Join(dir, "w.yaml")
		text := "slack:\n  api_url: http://127.0.0.1:1/api/\n  default_channel: C1\n" + c.slack
		if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		r := watchdogd(t, []string{"WATCHDOGD_SLACK_TOKEN=", "WATCHDOGD_CONFIG="}, "notify-test", "--config", cfg)
		want := "no Slack bot token: $WATCHDOGD_SLACK_TOKEN is unset and " + c.want
		if r.code != 1 || !strings.Contains(r.stderr, want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%s: exit %d, want one line with %q:\n%s", name, r.code, want, r.stderr)
		}
	}
}
