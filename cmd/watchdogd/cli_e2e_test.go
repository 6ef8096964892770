package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// TestAmtoolHabits, through the binary: with the config in
// $WATCHDOGD_CONFIG and no --config, silence add takes amtool's
// positional matchers (a regex among them) and prints the id that
// silence query -q prints; the next cycle holds the stall it matches and
// posts the one it does not; an episode opens by the first 8 characters
// of its id; silence expire takes what query -q printed; scan -o json is
// the report.
func TestAmtoolHabits(t *testing.T) {
	b := kandevdb.NewBuilder(time.Now())
	for _, s := range []struct{ id, ws string }{{"sess-pay", "ws-payments"}, {"sess-web", "ws-web"}} {
		b.Session(s.id, "Task "+s.id, s.ws, "RUNNING", time.Hour, "").Turn("turn-"+s.id, 40*time.Minute, -1, "").Agent("tool_call", 30*time.Minute)
	}
	e := newEnv(t, b.DS, "sqlite", "")
	_ = e.ledger() // as the daemon's first start would have
	env := append(e.environ(), "WATCHDOGD_CONFIG="+e.cfg)

	r := watchdogd(t, env, "silence", "add", "kind=stalled_turn", `workspace_id=~"ws-pay.*"`, "--duration", "1h", "--comment", "x")
	id := strings.TrimSpace(r.stdout)
	if r.code != 0 || len(id) != 8 {
		t.Fatalf("silence add: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := watchdogd(t, env, "silence", "query", "-q"); r.code != 0 || r.stdout != id+"\n" {
		t.Fatalf("silence query -q: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	r = watchdogd(t, env, "silence", "query")
	if !regexp.MustCompile(id + `\s+kind="stalled_turn" workspace_id=~"ws-pay\.\*"\s+\S+\s+active\s+oncall\s+x`).MatchString(r.stdout) {
		t.Fatalf("silence query:\n%s%s", r.stdout, r.stderr)
	}
	r = watchdogd(t, env, "run", "--once")
	if r.code != 0 {
		t.Fatalf("run --once with the config from the environment: %d %s", r.code, r.stderr)
	}
	msgs := e.slack.Messages()
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "sess-web") {
		t.Fatalf("posts %+v, want the ws-web stall only (ws-payments is silenced)", msgs)
	}
	var pay string
	for _, ep := range e.episodes() {
		if ep.SessionID == "sess-pay" {
			pay = ep.ID
		}
	}
	if pay == "" {
		t.Fatal("no episode of the silenced session")
	}
	r = watchdogd(t, env, "episodes", "show", pay[:8])
	if r.code != 0 || !regexp.MustCompile(`(?m)^episode:\s+`+pay+`$`).MatchString(r.stdout) {
		t.Fatalf("episodes show %s: exit %d\n%s%s", pay[:8], r.code, r.stdout, r.stderr)
	}
	if r := watchdogd(t, env, "episodes", "show", pay[:7]); r.code != 1 || !strings.Contains(r.stderr, "at least its first 8 characters") {
		t.Fatalf("episodes show of 7 characters: exit %d %s", r.code, r.stderr)
	}
	// What silence query -q printed is what silence expire takes, as
	// $(…) hands it over.
	q := watchdogd(t, env, "silence", "query", "-q")
	if r := watchdogd(t, env, append([]string{"silence", "expire"}, strings.Fields(q.stdout)...)...); r.code != 0 || r.stdout != "expired "+id+"\n" {
		t.Fatalf("silence expire: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := watchdogd(t, env, "silence", "query", "-q"); r.code != 0 || r.stdout != "" {
		t.Fatalf("silence query -q after the expiry: %q", r.stdout)
	}
	r = watchdogd(t, env, "scan", "-o", "json")
	var rep scan.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil || len(rep.Findings) != 2 {
		t.Fatalf("scan -o json: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
}

// TestManAndCompletion, through the binary: --help-man is a man page man
// reads, --completion-script-bash a script bash loads, and the completion
// it asks the binary for names the subcommands and the kinds.
func TestManAndCompletion(t *testing.T) {
	r := watchdogd(t, nil, "--help-man")
	if r.code != 0 || !strings.HasPrefix(r.stdout, ".TH watchdogd 1 ") || !strings.Contains(r.stdout, `\fBsilence add`) {
		t.Fatalf("--help-man: exit %d\n%.300s%s", r.code, r.stdout, r.stderr)
	}
	if groff, err := exec.LookPath("groff"); err == nil {
		page := filepath.Join(t.TempDir(), "watchdogd.1")
		if err := os.WriteFile(page, []byte(r.stdout), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(groff, "-man", "-Tascii", "-ww", "-z", page).CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("groff on the man page: %v\n%s", err, out)
		}
	}
	r = watchdogd(t, nil, "--completion-script-bash")
	if r.code != 0 || !strings.Contains(r.stdout, "complete -F _watchdogd_bash_autocomplete -o default watchdogd") {
		t.Fatalf("--completion-script-bash: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if bash, err := exec.LookPath("bash"); err == nil {
		if out, err := exec.Command(bash, "-n", "-c", r.stdout).CombinedOutput(); err != nil {
			t.Errorf("bash -n on the completion script: %v\n%s", err, out)
		}
	}
	if r := watchdogd(t, nil, "--completion-script-zsh"); r.code != 0 || !strings.HasPrefix(r.stdout, "#compdef watchdogd") {
		t.Fatalf("--completion-script-zsh: exit %d\n%s", r.code, r.stdout)
	}
	for args, want := range map[string][]string{
		"episodes":            {"list", "show", "resolve", "retry"},
		"silence add":         {"kind=stalled_turn", "workspace_id="},
		"scan --output":       {"table", "json"},
		"silence query --out": {"--output"},
	} {
		r := watchdogd(t, nil, append([]string{"--completion-bash"}, strings.Fields(args)...)...)
		for _, w := range want {
			if r.code != 0 || !strings.Contains("\n"+r.stdout+"\n", "\n"+w+"\n") {
				t.Errorf("completion of %q: exit %d %q, want %q", args, r.code, r.stdout, w)
			}
		}
	}
}
