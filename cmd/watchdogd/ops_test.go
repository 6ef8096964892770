package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
)

// TestCheckConfigGolden: check-config prints each golden bad file's exact
// file:line: field: problem and exits 1; the shipped configs pass.
func TestCheckConfigGolden(t *testing.T) {
	golden, err := os.ReadFile("../../internal/config/testdata/bad.golden")
	if err != nil {
		t.Fatal(err)
	}
	dir := "../../internal/config"
	for _, line := range strings.Split(strings.TrimSpace(string(golden)), "\n") {
		file := line[:strings.Index(line, ":")]
		r := watchdogd(t, []string{"WATCHDOGD_SLACK_TOKEN="}, "check-config", filepath.Join(dir, file))
		want := "FAILED: " + dir + "/" + line
		if r.code != 1 || strings.TrimSpace(r.stdout) != want {
			t.Errorf("check-config %s: exit %d\n got %q\nwant %q", file, r.code, strings.TrimSpace(r.stdout), want)
		}
	}
	// The defaults, the demo's config and every example pass.
	examples, _ := filepath.Glob("../../config/examples/*.yaml")
	shipped := append([]string{"../../config/watchdogd.yaml", "../../config/demo.yaml"}, examples...)
	r := watchdogd(t, []string{"WATCHDOGD_SLACK_TOKEN="}, append([]string{"check-config"}, shipped...)...)
	if len(examples) < 6 || r.code != 0 || strings.Count(r.stdout, "SUCCESS: ") != len(shipped) || strings.Contains(r.stdout, "FAILED") {
		t.Fatalf("shipped configs (%d examples): exit %d\n%s%s", len(examples), r.code, r.stdout, r.stderr)
	}
	// Several files: each reported, exit 1 on any failure.
	r = watchdogd(t, nil, "check-config", "../../config/demo.yaml", filepath.Join(dir, "testdata/bad-rule.yaml"))
	if r.code != 1 || !strings.HasPrefix(r.stdout, "SUCCESS: ../../config/demo.yaml\nFAILED: ") {
		t.Fatalf("mixed files: exit %d\n%s", r.code, r.stdout)
	}
}

// TestSilenceOnRunningDaemon: `silence add` on a running daemon's ledger
// defers the matching Slack step; `silence expire` releases it; and
// notify-test reaches Slack.
func TestSilenceOnRunningDaemon(t *testing.T) {
	b := kandevdb.NewBuilder(time.Now())
	s := b.Session("sess-a", "Task A", "ws-web", "RUNNING", time.Hour, "")
	s.Turn("turn-a", 40*time.Minute, -1, "").Agent("tool_call", 30*time.Minute)
	extra, base := daemonConfig(t, "")
	e := newEnv(t, b.DS, "sqlite", extra)
	_ = e.ledger() // as a daemon's earlier start would have (the operator commands need its ledger)
	r := watchdogd(t, e.environ(), "silence", "add", "--config", e.cfg, "--match", "session_id=sess-a", "--for", "2h", "--comment", "deploy in progress", "--author", "oncall")
	id := strings.TrimSpace(r.stdout)
	if r.code != 0 || len(id) != 8 {
		t.Fatalf("silence add: %d %q %s", r.code, r.stdout, r.stderr)
	}
	d := e.startDaemon(base)
	waitFor(t, 20*time.Second, "deferred", func() bool {
		return d.metric(t, `watchdogd_actions_total{action="slack",result="deferred"}`) >= 2
	})
	if n := len(e.slack.Messages()); n != 0 {
		t.Fatalf("%d posts while silenced", n)
	}
	d.waitView(t)
	_, page := d.get("/")
	if !strings.Contains(page, "silenced") {
		t.Error("the status page does not show the silence")
	}
	r = watchdogd(t, e.environ(), "silence", "list", "--config", e.cfg)
	if !regexp.MustCompile(id + `\s+session_id="sess-a"\s+\S+\s+active\s+oncall\s+deploy in progress`).MatchString(r.stdout) {
		t.Fatalf("silence list:\n%s", r.stdout)
	}
	if r := watchdogd(t, e.environ(), "silence", "expire", "--config", e.cfg, id); r.code != 0 {
		t.Fatalf("expire: %s", r.stderr)
	}
	waitFor(t, 10*time.Second, "the released post", func() bool { return len(e.slack.Messages()) == 1 })
	if r := watchdogd(t, e.environ(), "silence", "expire", "--config", e.cfg, id); r.code != 1 {
		t.Fatal("expiring twice succeeded")
	}
	r = watchdogd(t, e.environ(), "notify-test", "--config", e.cfg, "--workspace", "ws-ops")
	if r.code != 0 || !strings.Contains(r.stdout, "posted to C-ops") {
		t.Fatalf("notify-test: %d %s %s", r.code, r.stdout, r.stderr)
	}
	msgs := e.slack.Messages()
	if last := msgs[len(msgs)-1]; last.Channel != "C-ops" || !strings.Contains(last.Text, "notify-test") {
		t.Fatalf("notify-test message %+v", last)
	}
	if !strings.Contains(r.stdout, "read C-ops's history: ok") {
		t.Fatalf("notify-test did not check the history scope: %s", r.stdout)
	}
	// A bot without the history scope is told so: it could not settle an
	// interrupted delivery.
	e.slack.SetFault(func(method string, _ int) slacktest.Fault {
		if method == "conversations.history" {
			return slacktest.Fault{SlackError: "missing_scope"}
		}
		return slacktest.Fault{}
	})
	r = watchdogd(t, e.environ(), "notify-test", "--config", e.cfg, "--workspace", "ws-ops")
	if r.code != 1 || !strings.Contains(r.stderr, "channels:history") || !strings.Contains(r.stderr, "missing_scope") {
		t.Fatalf("notify-test without the history scope: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// TestEpisodesRetry: posts refused for good (a revoked token) stay failed
// through later cycles; once the token is fixed, `episodes retry` queues
// them again and the next cycle posts each once, after looking for it in
// the channel.
func TestEpisodesRetry(t *testing.T) {
	e := newEnv(t, world(time.Now()), "sqlite", "")
	e.slack.SetFault(func(method string, _ int) slacktest.Fault {
		if method == "chat.postMessage" {
			return slacktest.Fault{SlackError: "token_revoked"}
		}
		return slacktest.Fault{}
	})
	e.once()
	e.once()
	if n := len(e.slack.Messages()); n != 0 {
		t.Fatalf("%d posts with a revoked token", n)
	}
	e.slack.SetFault(nil)
	r := watchdogd(t, e.environ(), "episodes", "retry", "--config", e.cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "queued 8 failed action(s) again") {
		t.Fatalf("episodes retry: %d %s %s", r.code, r.stdout, r.stderr)
	}
	history := e.slack.Calls("conversations.history")
	e.once()
	if posts := e.exactlyOnce(); posts != 8 {
		t.Fatalf("%d posts after the retry, want 8", posts)
	}
	if n := e.slack.Calls("conversations.history") - history; n != 8 {
		t.Errorf("%d history lookups before the re-posts, want 8", n)
	}
	r = watchdogd(t, e.environ(), "episodes", "retry", "--config", e.cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "nothing to retry") {
		t.Fatalf("a second retry: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := watchdogd(t, e.environ(), "episodes", "retry", "--config", e.cfg, "no-such-episode"); r.code != 1 ||
		r.stderr != "watchdogd episodes retry: episode \"no-such-episode\": no such episode; watchdogd episodes list shows their ids\n" {
		t.Fatalf("retry of an unknown episode: %d %s", r.code, r.stderr)
	}
}

// TestEpisodesCommands: list shows episodes; show prints one with the
// Slack message it sent (channel and ts); resolve closes one by hand and
// the daemon edits its Slack message.
func TestEpisodesCommands(t *testing.T) {
	b := kandevdb.NewBuilder(time.Now())
	s := b.Session("sess-a", "Task A", "ws-web", "RUNNING", time.Hour, "")
	s.Turn("turn-a", 40*time.Minute, -1, "").Agent("tool_call", 30*time.Minute)
	e := newEnv(t, b.DS, "sqlite", "")
	e.once()
	r := watchdogd(t, e.environ(), "episodes", "list", "--open", "--config", e.cfg)
	m := regexp.MustCompile(`(?m)^([0-9a-f-]{36})\s+stalled_turn\s+sess-a\s+Task A\s+30m\s+open$`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("episodes list:\n%s", r.stdout)
	}
	first := e.slack.Messages()[0]
	r = watchdogd(t, e.environ(), "episodes", "show", "--config", e.cfg, m[1])
	for _, re := range []string{`(?m)^episode:\s+` + m[1] + `$`, `(?m)^kind:\s+stalled_turn$`, `(?m)^task:\s+Task A \(`,
		`(?m)^state:\s+open$`, `(?m)^step/\S+\s+slack\s+delivered\s+1\s+\S+\s+` + regexp.QuoteMeta(first.Channel+" "+first.TS) + `\s*$`} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("episodes show lacks %s:\n%s", re, r.stdout)
		}
	}
	if r := watchdogd(t, e.environ(), "episodes", "show", "--config", e.cfg, "no-such-episode"); r.code != 1 || !strings.Contains(r.stderr, `episode "no-such-episode": no such episode`) {
		t.Errorf("show of an unknown episode: code %d, stderr %q", r.code, r.stderr)
	}
	if r := watchdogd(t, e.environ(), "episodes", "resolve", "--config", e.cfg, m[1]); r.code != 0 ||
		!strings.Contains(r.stdout, "\n  watchdogd silence add --config "+e.cfg+" session_id=sess-a --duration 2h --comment ") {
		t.Fatalf("resolve: %d %s %s", r.code, r.stdout, r.stderr)
	}
	e.once() // a cycle delivers the edit (and the stall, still there, opens anew)
	msgs := e.slack.Messages()
	if msgs[0].Edits != 1 || !strings.Contains(msgs[0].Text, "resolved by hand") {
		t.Fatalf("first message %+v", msgs[0])
	}
	r = watchdogd(t, e.environ(), "episodes", "list", "--config", e.cfg)
	if !strings.Contains(r.stdout, "resolved: resolved by hand") || strings.Count(r.stdout, "\n") != 3 || r.stderr != "" {
		t.Fatalf("episodes list:\n%s%s", r.stdout, r.stderr)
	}
	// Two episodes now (the resolved one and the stall opened anew): a
	// limit of one shows the newest and says there are more.
	r = watchdogd(t, e.environ(), "episodes", "list", "--config", e.cfg, "--limit", "1")
	if strings.Count(r.stdout, "\n") != 2 || !strings.Contains(r.stdout, " open\n") || r.stderr != "showing the newest 1; --limit 0 lists them all\n" {
		t.Fatalf("episodes list --limit 1:\n%s%s", r.stdout, r.stderr)
	}
}

// TestOperatorCommandsNeedTheLedger: run against a ledger no daemon has
// created (the wrong --config, the wrong directory), the operator commands
// say so and exit 1 instead of creating an empty ledger and reporting that
// nothing is open or silenced; silence add refuses a silence without a
// comment before it looks for the ledger.
func TestOperatorCommandsNeedTheLedger(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.db")
	cfg := filepath.Join(dir, "watchdogd.yaml")
	if err := os.WriteFile(cfg, []byte("state:\n  url: sqlite://"+state+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"episodes", "list"}, {"episodes", "show", "--config", cfg, "x"}, {"episodes", "resolve", "--config", cfg, "x"},
		{"silence", "list"}, {"silence", "expire", "--config", cfg, "x"}, {"silence", "add", "--match", "kind=stalled_turn", "--for", "1h", "--comment", "deploy", "-a", "me"}} {
		if args[len(args)-1] != "x" {
			args = append(args, "--config", cfg)
		}
		r := watchdogd(t, nil, args...)
		want := "ledger sqlite://" + state + ": not found; the daemon creates it on its first start"
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", args, r.code, r.stderr, want)
		}
	}
	r := watchdogd(t, nil, "silence", "add", "--config", cfg, "--match", "kind=stalled_turn", "--for", "1h")
	if r.code != 2 || !strings.Contains(r.stderr, "silence add needs --comment") {
		t.Errorf("silence add without --comment: exit %d, stderr %q", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the commands left files behind: %v", entries)
	}
}

// startReplica starts another daemon on the same kandev, ledger and Slack
// with its own config file (name.yaml: its own port, more appended), and
// leaves e's config as it was.
