package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// testProc is a process for parse: its streams captured, an environment
// of env only, and no file but those in files.
func testProc(env map[string]string, files ...string) (proc, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return proc{stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] },
		exists:  func(p string) bool { return strings.Contains(strings.Join(files, "\x00"), p) && p != "" },
		version: "v9.9.9", now: time.Now}, &out, &errb
}

// TestParse: what each command line becomes, and the one line (or the
// help) a mistake gets, with its exit code.
func TestParse(t *testing.T) {
	user := map[string]string{"USER": "oncall"}
	cases := []struct {
		name   string
		args   []string
		env    map[string]string
		code   int  // exit code when parsing stops (0 with ok: parsed)
		ok     bool // parsed: the command runs
		stdout string
		stderr string
		check  func(Options) bool
	}{
		{name: "flags after the ID, as people type them", args: []string{"episodes", "show", "ep-1", "--config", "w.yaml"}, ok: true,
			check: func(o Options) bool {
				c, ok := o.Cmd.(*episodesShowCmd)
				return ok && c.id == "ep-1" && c.config == "w.yaml" && o.Name == "episodes show"
			}},
		{name: "flags before the IDs", args: []string{"silence", "expire", "--config", "w.yaml", "s-1", "s-2"}, ok: true,
			check: func(o Options) bool {
				c, ok := o.Cmd.(*silenceExpireCmd)
				return ok && strings.Join(c.ids, ",") == "s-1,s-2" && c.config == "w.yaml"
			}},
		{name: "after -- an ID may start with a dash", args: []string{"episodes", "resolve", "--config", "w.yaml", "--", "-odd"}, ok: true,
			check: func(o Options) bool { c, ok := o.Cmd.(*episodesResolveCmd); return ok && c.id == "-odd" }},
		// amtool's way: matchers as arguments, the operators quoted for
		// the shell or not.
		{name: "positional matchers", args: []string{"silence", "add", "kind=stalled_turn", `workspace_id=~"ws-pay.*"`, "task_id!=t1", "-d", "2h", "-c", "x"},
			env: user, ok: true,
			check: func(o Options) bool {
				c, ok := o.Cmd.(*silenceAddCmd)
				return ok && c.add.Matchers.String() == `kind="stalled_turn" workspace_id=~"ws-pay.*" task_id!="t1"` && c.forDur == 2*time.Hour &&
					c.add.Comment == "x" && c.add.CreatedBy == "oncall" && len(c.add.ID) == 8
			}},
		// The spellings the README documented: --match k=v, repeated,
		// and --for.
		{name: "repeated --match and --for", args: strings.Fields("silence add --match kind=stalled_turn --for 2h --comment x --match session_id=s1"), env: user, ok: true,
			check: func(o Options) bool {
				c, ok := o.Cmd.(*silenceAddCmd)
				return ok && c.add.Matchers.String() == `kind="stalled_turn" session_id="s1"` && c.forDur.Hours() == 2
			}},
		{name: "--duration, amtool's", args: strings.Fields("silence add kind=stalled_turn --duration 90m --comment x"), env: user, ok: true,
			check: func(o Options) bool { c, ok := o.Cmd.(*silenceAddCmd); return ok && c.forDur.Minutes() == 90 }},
		{name: "-a names the author over $USER", args: strings.Fields("silence add kind=stalled_turn -d 1h -c x -a alice"), env: user, ok: true,
			check: func(o Options) bool { c, ok := o.Cmd.(*silenceAddCmd); return ok && c.add.CreatedBy == "alice" }},
		// The image's user (uid 65532) names nobody: no $USER, no author.
		{name: "no $USER and no -a", args: strings.Fields("silence add kind=stalled_turn -d 1h -c x"), code: exitUsage,
			stderr: "watchdogd silence add: silence add needs --author (-a): $USER is not set here (see watchdogd silence add --help)"},
		{name: "a bad matcher", args: strings.Fields("silence add kind=stale -d 1h -c x"), env: user, code: exitUsage,
			stderr: `watchdogd silence add: matcher kind "stale": unknown kind (known: unanswered_clarification, shadowed_clarification, pending_permission, never_started, stalled_turn, interrupted_session, multiple_open_turns) (see watchdogd silence add --help)`},
		{name: "a bad regex", args: []string{"silence", "add", "task_id=~(", "-d", "1h", "-c", "x"}, env: user, code: exitUsage,
			stderr: "watchdogd silence add: matcher task_id=~\"(\": not a regular expression (RE2): error parsing regexp: missing closing ): `(` (see watchdogd silence add --help)"},
		{name: "no matcher", args: strings.Fields("silence add -d 1h -c x"), env: user, code: exitUsage,
			stderr: `watchdogd silence add: silence add needs a matcher, like kind=stalled_turn or workspace_id=~"ws-pay.*" (see watchdogd silence add --help)`},
		{name: "only matchers an empty value matches", args: strings.Fields("silence add task_id!=t1 -d 1h -c x"), env: user, code: exitUsage,
			stderr: `watchdogd silence add: silence add task_id!="t1": each matcher also matches an empty value; add one that names what to silence, as Alertmanager requires (see watchdogd silence add --help)`},
		{name: "no duration", args: strings.Fields("silence add kind=stalled_turn -c x"), env: user, code: exitUsage,
			stderr: "watchdogd silence add: silence add needs --duration (like 2h) (see watchdogd silence add --help)"},
		{name: "episodes list keeps its default limit", args: strings.Fields("episodes list --open"), ok: true,
			check: func(o Options) bool { c, ok := o.Cmd.(*episodesListCmd); return ok && c.open && c.limit == 500 }},
		{name: "a negative limit", args: strings.Fields("episodes list --limit=-1"), code: exitUsage,
			stderr: "watchdogd episodes list: --limit must be 0 (all) or more (see watchdogd episodes list --help)"},
		// A subcommand that does not exist is a usage error before any
		// ledger is opened.
		{name: "unknown subcommand", args: strings.Fields("episodes bogus --config w.yaml"), code: exitUsage,
			stderr: `watchdogd episodes: unknown subcommand "bogus", want one of list, show, resolve, retry (see watchdogd episodes --help)`},
		{name: "missing subcommand", args: strings.Fields("silence --config w.yaml"), code: exitUsage,
			stderr: "watchdogd silence: missing subcommand, one of add, query, expire (see watchdogd silence --help)"},
		{name: "missing subcommand, nothing else", args: strings.Fields("silence"), code: exitUsage,
			stderr: "watchdogd silence: missing subcommand, one of add, query, expire (see watchdogd silence --help)"},
		{name: "unknown command", args: strings.Fields("frobnicate"), code: exitUsage,
			stderr: `watchdogd: unknown command "frobnicate", want one of run, scan, check-config, silence, episodes, report, notify-test, demo, version (see watchdogd --help)`},
		// amtool's spellings where ours differ.
		{name: "silence list is silence query", args: strings.Fields("silence list --config w.yaml --all"), ok: true,
			check: func(o Options) bool {
				c, ok := o.Cmd.(*silenceQueryCmd)
				return ok && c.all && c.output == "table" && o.Name == "silence query"
			}},
		{name: "silence query -q", args: strings.Fields("silence query -q"), ok: true,
			check: func(o Options) bool { c, ok := o.Cmd.(*silenceQueryCmd); return ok && c.quiet }},
		{name: "-o is --output", args: strings.Fields("episodes show ep-1 -o json"), ok: true,
			check: func(o Options) bool { c, ok := o.Cmd.(*episodesShowCmd); return ok && c.output == "json" }},
		{name: "scan -o json", args: strings.Fields("scan -o json"), ok: true,
			check: func(o Options) bool { c, ok := o.Cmd.(*scanCmd); return ok && c.output == "json" }},
		{name: "demo -o json", args: strings.Fields("demo -o json"), ok: true,
			check: func(o Options) bool { c, ok := o.Cmd.(*demoCmd); return ok && c.output == "json" }},
		{name: "--output json on episodes list", args: strings.Fields("episodes list --output json"), ok: true,
			check: func(o Options) bool { c, ok := o.Cmd.(*episodesListCmd); return ok && c.output == "json" }},
		{name: "an output that does not exist", args: strings.Fields("silence query --output yaml"), code: exitUsage,
			stderr: `watchdogd silence query: --output "yaml": want table or json (see watchdogd silence query --help)`},
		{name: "a command's help lists its subcommands", args: strings.Fields("episodes -h"), code: exitOK,
			stdout: "usage: watchdogd episodes <command> [<args> ...]"},
		{name: "a subcommand's help shows its flags", args: strings.Fields("silence query --help"), code: exitOK,
			stdout: "-q, --[no-]quiet"},
		{name: "help, the command", args: strings.Fields("help episodes show"), code: exitOK,
			stdout: "usage: watchdogd episodes show [<flags>] <id>"},
		{name: "a flag of another subcommand", args: strings.Fields("silence query --for 2h"), code: exitUsage,
			stderr: "watchdogd silence query: unknown long flag '--for' (see watchdogd silence query --help)"},
		{name: "retry takes an ID", args: strings.Fields("episodes retry ep-1 --config w.yaml"), ok: true,
			check: func(o Options) bool { c, ok := o.Cmd.(*episodesRetryCmd); return ok && c.id == "ep-1" }},
		{name: "or none", args: strings.Fields("episodes retry --config w.yaml"), ok: true,
			check: func(o Options) bool { c, ok := o.Cmd.(*episodesRetryCmd); return ok && c.id == "" }},
		{name: "but not two", args: strings.Fields("episodes retry a b"), code: exitUsage,
			stderr: `watchdogd episodes retry: unexpected argument "b" (see watchdogd episodes retry --help)`},
		{name: "show needs an ID", args: strings.Fields("episodes show"), code: exitUsage,
			stderr: "watchdogd episodes show: required argument 'id' not provided (see watchdogd episodes show --help)"},
		{name: "expire needs an ID", args: strings.Fields("silence expire"), code: exitUsage,
			stderr: "watchdogd silence expire: required argument 'id' not provided (see watchdogd silence expire --help)"},
		{name: "an argument where none is taken", args: strings.Fields("episodes list extra"), code: exitUsage,
			stderr: `watchdogd episodes list: unexpected argument "extra" (see watchdogd episodes list --help)`},
		{name: "unknown flag", args: strings.Fields("scan --bogus"), code: exitUsage,
			stderr: "watchdogd scan: unknown long flag '--bogus' (see watchdogd scan --help)"},
		// A line break or an escape typed (or pasted) stays escaped: one
		// line, and nothing for the terminal to act on.
		{name: "an unknown flag with a line break", args: []string{"scan", "--bo\ngus\x1b[2J"}, code: exitUsage,
			stderr: `watchdogd scan: unknown long flag '--bo\ngus\x1b[2J' (see watchdogd scan --help)`},
		{name: "--version, as Prometheus's tools take it", args: strings.Fields("--version"), code: exitOK,
			stdout: "watchdogd v9.9.9 ("},
		{name: "check-config takes files", args: strings.Fields("check-config a.yaml b.yaml"), ok: true,
			check: func(o Options) bool {
				c, ok := o.Cmd.(*checkConfigCmd)
				return ok && len(c.files) == 2 && c.files[1] == "b.yaml"
			}},
		{name: "no command: the help, on stderr", args: nil, code: exitUsage, stderr: "usage: watchdogd [<flags>] <command> [<args> ...]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, out, errb := testProc(c.env)
			o, code, ok := parse(c.args, p)
			if ok != c.ok || (!ok && code != c.code) {
				t.Fatalf("ok=%v code=%d, want ok=%v code=%d; stderr %q", ok, code, c.ok, c.code, errb.String())
			}
			if c.check != nil && !c.check(o) {
				t.Errorf("parsed to %q %+v", o.Name, o.Cmd)
			}
			if !strings.Contains(out.String(), c.stdout) {
				t.Errorf("stdout %q, want %q", out.String(), c.stdout)
			}
			got := strings.TrimSpace(errb.String())
			if c.args == nil {
				got, _, _ = strings.Cut(got, "\n")
			}
			if c.stderr != "" && got != c.stderr {
				t.Errorf("stderr\n %q\nwant\n %q", got, c.stderr)
			}
			if c.stderr == "" && errb.Len() > 0 {
				t.Errorf("unexpected stderr %q", errb.String())
			}
		})
	}
}

// TestLogFlagsOnEveryCommand: every command takes --log.level and
// --log.format (Prometheus' spelling), anywhere among its arguments, and a
// level or format the logger does not have is a usage error.
func TestLogFlagsOnEveryCommand(t *testing.T) {
	for _, line := range []string{"run", "run --once", "scan", "demo", "check-config a.yaml", "notify-test", "version",
		"silence add kind=stalled_turn --for 1h --comment x -a me", "silence query", "silence expire s-1",
		"episodes list", "episodes show ep-1", "episodes resolve ep-1", "episodes retry"} {
		args := append(strings.Fields(line), "--log.level=warn", "--log.format", "console")
		p, _, errb := testProc(nil)
		o, _, ok := parse(args, p)
		if !ok || o.Proc.log.Level != "warn" || o.Proc.log.Format != "console" {
			t.Errorf("%s: ok=%v log=%+v stderr %q", line, ok, o.Proc.log, errb.String())
		}
	}
	for args, want := range map[string]string{
		"scan --log.level loud":     `watchdogd scan: --log.level "loud": want debug, info, warn or error (see watchdogd scan --help)`,
		"run --log.format=logfmt":   `watchdogd run: --log.format "logfmt": want json or console (see watchdogd run --help)`,
		"episodes list --log.level": "watchdogd episodes list: expected argument for flag '--log.level' (see watchdogd episodes list --help)",
	} {
		p, _, errb := testProc(nil)
		if _, code, ok := parse(strings.Fields(args), p); ok || code != exitUsage || strings.TrimSpace(errb.String()) != want {
			t.Errorf("%s: ok=%v code=%d stderr %q, want %q", args, ok, code, errb.String(), want)
		}
	}
}
