package main

import (
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

// hostileTerminal is what an agent can put in a title or a question to act
// on the terminal of whoever reads the output: a colour, a window title
// change (OSC 0, ended by BEL), a carriage return that overwrites the line,
// a newline that forges a row of the table, a C1 CSI and a right-to-left
// override.
const hostileTerminal = "Fix \x1b[31mred\x1b[0m \x1b]0;owned\x07 over\rwritten\nforged\trow \u009b2J \u202eevil \xff"

// rawControl finds what a terminal would act on in an output.
var rawControl = regexp.MustCompile("[\x00-\x09\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069]")

// checkTerminal fails when out carries a raw control, a byte that is not
// UTF-8, or a line the title's newline began. In a message the console
// prints (blocks) a question's own line breaks stay, indented under its
// header; in a table nothing of a value may begin a line.
func checkTerminal(t *testing.T, what, out string, blocks bool) {
	t.Helper()
	if loc := rawControl.FindStringIndex(out); loc != nil || !utf8.ValidString(out) {
		t.Errorf("%s prints raw control bytes (at %v, valid UTF-8 %v):\n%q", what, loc, utf8.ValidString(out), out)
	}
	if !strings.Contains(out, `\x1b]0;owned\x07`) {
		t.Errorf("%s does not show the escape sequence escaped:\n%s", what, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if !blocks {
			line = strings.TrimSpace(line)
		}
		if strings.HasPrefix(line, "forged") {
			t.Errorf("%s: a newline in the title forged a line: %q", what, line)
		}
	}
}

// TestTerminalOutputIsEscaped: titles, questions and ids holding ESC and
// OSC sequences, CR, newlines, C1 controls, bidi overrides and bytes that
// are not UTF-8 are printed escaped by `scan`, `run --once --dry-run`,
// `episodes list` and `show` and `silence list`, each finding on its own
// line.
func TestTerminalOutputIsEscaped(t *testing.T) {
	b := kandevdb.NewBuilder(time.Now())
	s := b.Session("sess-\x1b[2Jx", hostileTerminal, "ws-web", "WAITING_FOR_INPUT", time.Hour, "")
	s.Turn("turn-t", 50*time.Minute, -1, "").Clarification("p-t", "q-t", hostileTerminal, hostileTerminal,
		[]kandevdb.QuestionOpt{{ID: "a", Label: hostileTerminal, Description: hostileTerminal}}, "", 30*time.Minute, nil)
	e := newEnv(t, b.DS, "sqlite", "")

	r := watchdogd(t, e.environ(), "scan", "--config", e.cfg)
	if r.code != 0 {
		t.Fatalf("scan: %d %s", r.code, r.stderr)
	}
	checkTerminal(t, "scan", r.stdout, false)
	if n := strings.Count(r.stdout, "\n"); n != 3 { // header, the question, the count
		t.Errorf("scan printed %d lines for one finding:\n%s", n, r.stdout)
	}

	r = watchdogd(t, e.environ(), "run", "--once", "--dry-run", "--config", e.cfg)
	if r.code != 0 {
		t.Fatalf("run --once --dry-run: %d %s", r.code, r.stderr)
	}
	checkTerminal(t, "run --once --dry-run", r.stdout, true)

	e.once()
	r = watchdogd(t, e.environ(), "episodes", "list", "--config", e.cfg)
	checkTerminal(t, "episodes list", r.stdout, false)
	if n := strings.Count(r.stdout, "\n"); n != 2 {
		t.Errorf("episodes list printed %d lines for one episode:\n%s", n, r.stdout)
	}
	id := regexp.MustCompile(`(?m)^[0-9a-f-]{36}`).FindString(r.stdout)
	r = watchdogd(t, e.environ(), "episodes", "show", "--config", e.cfg, id)
	if r.code != 0 {
		t.Fatalf("episodes show %q: %d %s", id, r.code, r.stderr)
	}
	checkTerminal(t, "episodes show", r.stdout, false)

	r = watchdogd(t, e.environ(), "silence", "add", "--config", e.cfg, "--match", "session_id=sess-\x1b[2Jx", "--for", "1h",
		"--comment", hostileTerminal, "--author", "on\rcall")
	if r.code != 0 {
		t.Fatalf("silence add: %d %s", r.code, r.stderr)
	}
	r = watchdogd(t, e.environ(), "silence", "list", "--config", e.cfg)
	checkTerminal(t, "silence list", r.stdout, false)
	if n := strings.Count(r.stdout, "\n"); n != 2 {
		t.Errorf("silence list printed %d lines for one silence:\n%s", n, r.stdout)
	}
}

// TestDryRunLogPreviewEscaped: `run --dry-run`'s preview of a log step
// prints the finding's line escaped, on one line: the title's newline does
// not begin a line of the terminal.
func TestDryRunLogPreviewEscaped(t *testing.T) {
	b := kandevdb.NewBuilder(time.Now())
	s := b.Session("sess-log", hostileTerminal, "ws-web", "WAITING_FOR_INPUT", time.Hour, "")
	s.Turn("turn-l", 50*time.Minute, -1, "").Clarification("p-l", "q-l", "Which?", "Which?", nil, "", 30*time.Minute, nil)
	e := newEnv(t, b.DS, "sqlite", "policy:\n  unanswered_clarification:\n    steps: [{after: 0s, action: log}]\n")
	r := watchdogd(t, e.environ(), "run", "--once", "--dry-run", "--config", e.cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "→ log: ") {
		t.Fatalf("run --once --dry-run: %d %s%s", r.code, r.stdout, r.stderr)
	}
	checkTerminal(t, "run --dry-run's log preview", r.stdout, true)
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "→ log: ") && !strings.Contains(line, `written\nforged`) {
			t.Errorf("the log line is not one line, its newline escaped: %q", line)
		}
	}
}
