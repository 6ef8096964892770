package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// docFiles are the documents whose commands the person paged at 3 a.m.
// copies.
var docFiles = []string{"../../README.md", "../../docs/runbook.md"}

// notRunHere are the documented command lines this test does not run,
// each with why: it cannot run against a demo ledger, or runs until
// stopped. A line leaving the docs must leave this list too.
var notRunHere = map[string]string{
	"bin/watchdogd demo --keep /tmp/watchdogd-demo":                 "makes the demo directory this test makes for itself, in a temporary one (a second run refuses an existing directory)",
	"bin/watchdogd run --config /tmp/watchdogd-demo/watchdogd.yaml": "the daemon: it runs until ^C (this test runs the same config's run --once)",
	"watchdogd run --config watchdogd.yaml":                         "the daemon: it runs until stopped (run --once, below it, is the same cycle)",
	"watchdogd notify-test --workspace ws-1":                        "posts to Slack: the demo's config has no slack: block (TestSilenceOnRunningDaemon runs it against a Slack)",
}

// exampleEpisode is the docs' example episode id (the first 8 characters
// of one, as the commands take it): each line is run with it standing
// for an open episode of the demo ledger.
const exampleEpisode = "1a2b3c4d"

// docCommands are the command lines of path's fenced blocks that start
// with watchdogd (or bin/watchdogd), continuation lines joined.
func docCommands(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fenced, cont := false, ""
	for _, raw := range strings.Split(string(b), "\n") {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "```") {
			fenced, cont = !fenced, ""
			continue
		}
		if !fenced {
			continue
		}
		if cont != "" {
			line, cont = cont+" "+line, ""
		} else if !strings.HasPrefix(line, "watchdogd ") && !strings.HasPrefix(line, "bin/watchdogd ") {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			cont = strings.TrimSuffix(line, `\`)
			continue
		}
		out = append(out, line)
	}
	return out
}

// TestDocsCommands: every command line the README and the runbook print
// in a fenced block runs as printed against a demo ledger (`demo --keep`,
// then one cycle), in the demo's directory, its config found through
// $WATCHDOGD_CONFIG as in the image, and exits 0, in the order the docs
// give them. So the docs cannot drift from the command line.
func TestDocsCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	if r := watchdogd(t, nil, "demo", "--keep", dir); r.code != 0 {
		t.Fatalf("demo --keep: exit %d %s", r.code, r.stderr)
	}
	cfg := filepath.Join(dir, "watchdogd.yaml")
	env := []string{"WATCHDOGD_CONFIG=" + cfg, "USER=oncall", "WATCHDOGD_DATABASE_URL=", "WATCHDOGD_SLACK_TOKEN=",
		"PATH=" + filepath.Dir(binary) + string(os.PathListSeparator) + os.Getenv("PATH")}
	if r := watchdogd(t, env, "run", "--once"); r.code != 0 { // the daemon's first cycle: the ledger, its episodes
		t.Fatalf("run --once on the demo: exit %d %s", r.code, r.stderr)
	}
	ran, seen := 0, map[string]bool{}
	for _, doc := range docFiles {
		for _, line := range docCommands(t, doc) {
			seen[withoutComment(line)] = true
			if why, ok := notRunHere[withoutComment(line)]; ok {
				t.Logf("not run (%s): %s", why, line)
				continue
			}
			run := line
			if strings.Contains(run, exampleEpisode) {
				run = strings.ReplaceAll(run, exampleEpisode, openEpisode(t, env)[:8])
			}
			out, err := shell(dir, env, run)
			if err != nil {
				t.Errorf("%s: %s as printed: %v\n%s", filepath.Base(doc), line, err, out)
				continue
			}
			ran++
		}
	}
	for line := range notRunHere {
		if !seen[line] {
			t.Errorf("not run, but not in the docs either (remove it from notRunHere): %s", line)
		}
	}
	// Both documents print their commands; a test that ran none would
	// prove nothing.
	if ran < 20 {
		t.Fatalf("ran %d documented command lines, want at least 20", ran)
	}
	t.Logf("ran %d documented command lines, %d not run here", ran, len(notRunHere))
}

// openEpisode is the id of an open episode of the ledger env's config
// names, asked of the binary.
func openEpisode(t *testing.T, env []string) string {
	t.Helper()
	r := watchdogd(t, env, "episodes", "list", "--open", "-o", "json")
	var list struct {
		Episodes []struct {
			ID string `json:"id"`
		} `json:"episodes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list.Episodes) == 0 {
		t.Fatalf("no open episode in the demo ledger: %v %s", err, r.stderr)
	}
	return list.Episodes[len(list.Episodes)-1].ID
}

// withoutComment is line without its shell comment (a # after a blank,
// outside quotes), trimmed: how notRunHere names it.
func withoutComment(line string) string {
	var quote rune
	prev := ' '
	for i, c := range line {
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '"' || c == '\'':
			quote = c
		case c == '#' && (prev == ' ' || prev == '\t'):
			return strings.TrimSpace(line[:i])
		}
		prev = c
	}
	return strings.TrimSpace(line)
}

// shell runs line with sh in dir, as a person pastes it.
func shell(dir string, env []string, line string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", strings.Replace(line, "bin/watchdogd ", "watchdogd ", 1))
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestDocCommandsRead: the docs' command lines are read whole: a fenced
// line continued with a backslash is one, unfenced prose and other
// commands are not.
func TestDocCommandsRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	text := "watchdogd prose is not run\n\n```sh\nwatchdogd scan \\\n  -o json   # the report\n  bin/watchdogd version\ncurl x\n```\n\n```\nwatchdogd episodes list\n```\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(docCommands(t, path), "|")
	if want := "watchdogd scan  -o json   # the report|bin/watchdogd version|watchdogd episodes list"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	for in, want := range map[string]string{
		"watchdogd scan  -o json   # the report":                  "watchdogd scan  -o json",
		`watchdogd silence add kind=x --comment "deploy #2"  # x`: `watchdogd silence add kind=x --comment "deploy #2"`,
		"watchdogd scan -o json#no blank before it":               "watchdogd scan -o json#no blank before it",
	} {
		if got := withoutComment(in); got != want {
			t.Errorf("withoutComment(%q) = %q, want %q", in, got, want)
		}
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(exampleEpisode) {
		t.Fatal("the example episode id is not an id's first 8 characters")
	}
}
