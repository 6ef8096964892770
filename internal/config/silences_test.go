package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/watchdogd/watchdogd/internal/model"
)

// TestSilenceMatchers: a config silence takes Alertmanager's matchers:
// beside the equality match: routes use, and both hold together.
func TestSilenceMatchers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.yaml")
	if err := os.WriteFile(path, []byte(`silences:
  - matchers: ['kind="stalled_turn"', 'workspace_id=~"ws-pay.*"']
    until: 2027-01-01T00:00:00Z
  - match: {session_id: s1}
    matchers: [task_id!=t1]
    until: 2027-01-01T00:00:00Z
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range cfg.Silences {
		got = append(got, s.All().String())
	}
	want := []string{`kind="stalled_turn" workspace_id=~"ws-pay.*"`, `session_id="s1" task_id!="t1"`}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("matchers %q, want %q", got, want)
	}
	pay := model.Episode{Kind: model.KindStalledTurn, WorkspaceID: "ws-payments"}
	if !cfg.Silences[0].All().Matches(pay) {
		t.Error("the regex silence does not match ws-payments")
	}
	if pay.WorkspaceID = "ws-web"; cfg.Silences[0].All().Matches(pay) {
		t.Error("the regex silence matches ws-web")
	}
}
