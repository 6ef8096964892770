package main

import (
	"strings"
	"testing"
)

// walk calls f for every entry, with its full name ("silence add").
func walk(es []entry, prefix string, f func(full string, e entry)) {
	for _, e := range es {
		full := strings.TrimSpace(prefix + " " + e.name)
		f(full, e)
		walk(e.subs, full, f)
	}
}

// TestEveryCommandHelps: every command and subcommand has a one-line
// description and an example, its --help prints both, and the example is
// a command line that parses (a mistake in one is a failed test, not a
// user's first error).
func TestEveryCommandHelps(t *testing.T) {
	n := 0
	walk(commands(), "", func(full string, e entry) {
		n++
		if e.help == "" || strings.Contains(e.help, "\n") || !strings.HasSuffix(e.help, ".") {
			t.Errorf("%s: description %q, want one line, a sentence", full, e.help)
		}
		if !strings.HasPrefix(e.example, "watchdogd "+full) {
			t.Errorf("%s: example %q is not of the command", full, e.example)
		}
		p, out, errb := testProc(map[string]string{"USER": "oncall"})
		if _, code, ok := parse(append(strings.Fields(full), "--help"), p); ok || code != exitOK || errb.Len() > 0 {
			t.Errorf("%s --help: ok=%v code=%d stderr %q", full, ok, code, errb.String())
		}
		for _, want := range []string{"usage: watchdogd " + full, e.help[:min(len(e.help), 60)], "$ " + e.example} {
			if !strings.Contains(strings.Join(strings.Fields(out.String()), " "), strings.Join(strings.Fields(want), " ")) {
				t.Errorf("%s --help lacks %q:\n%s", full, want, out.String())
			}
		}
		if e.cmd == nil {
			return
		}
		// The example as a shell would split it: $(…) and quotes aside,
		// the words.
		line := strings.NewReplacer(`"`, "", "$(watchdogd silence query -q session_id=sess-stalled)", "a1b2c3d4").Replace(e.example)
		p, _, errb = testProc(map[string]string{"USER": "oncall"})
		if _, _, ok := parse(strings.Fields(line)[1:], p); !ok {
			t.Errorf("%s: its example %q does not parse: %s", full, e.example, errb.String())
		}
	})
	if n < 14 {
		t.Fatalf("%d commands, want at least 14", n)
	}
}

// TestGenerated: --help-long, --help-man and the completion scripts are
// written to the process's stdout, whole, and exit 0; the man page is
// roff with every command in it.
func TestGenerated(t *testing.T) {
	for flag, want := range map[string][]string{
		"--help-long":              {"usage: watchdogd", "silence add [<flags>] [<matcher>...]", "--duration=2h", "episodes show [<flags>] <id>"},
		"--help-man":               {".TH watchdogd 1 \"\" \"watchdogd v9.9.9 (", ".SH \"COMMANDS\"", "\\fBsilence add", "\\fBepisodes retry", ".nf\n.RS\n  $ watchdogd scan \\-o json\n.RE\n.fi"},
		"--completion-script-bash": {"_watchdogd_bash_autocomplete()", "complete -F _watchdogd_bash_autocomplete -o default watchdogd"},
		"--completion-script-zsh":  {"#compdef watchdogd", "compdef _watchdogd watchdogd"},
	} {
		p, out, errb := testProc(nil)
		if _, code, ok := parse([]string{flag}, p); ok || code != exitOK || errb.Len() > 0 {
			t.Errorf("%s: ok=%v code=%d stderr %q", flag, ok, code, errb.String())
		}
		for _, w := range want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s lacks %q", flag, w)
			}
		}
	}
}

// TestFindConfig: a command given no --config reads $WATCHDOGD_CONFIG,
// else the image's file where it exists, else none (the defaults); a
// --config given wins, and check-config with no file checks the one found.
func TestFindConfig(t *testing.T) {
	cases := []struct {
		name  string
		env   map[string]string
		files []string
		args  string
		want  string
	}{
		{"the environment", map[string]string{"WATCHDOGD_CONFIG": "/cfg/w.yaml"}, []string{imageConfig, "/cfg/w.yaml"}, "episodes list", "/cfg/w.yaml"},
		{"the image's file", nil, []string{imageConfig}, "silence query", imageConfig},
		{"nothing: the defaults", nil, nil, "run --once", ""},
		{"the flag wins", map[string]string{"WATCHDOGD_CONFIG": "/cfg/w.yaml"}, []string{imageConfig}, "scan --config mine.yaml", "mine.yaml"},
		{"notify-test", nil, []string{imageConfig}, "notify-test", imageConfig},
		{"episodes resolve", map[string]string{"WATCHDOGD_CONFIG": "/e.yaml"}, []string{"/e.yaml"}, "episodes resolve 1a2b3c4d", "/e.yaml"},
	}
	for _, c := range cases {
		p, _, errb := testProc(c.env, c.files...)
		o, _, ok := parse(strings.Fields(c.args), p)
		if !ok {
			t.Fatalf("%s: %s", c.name, errb.String())
		}
		got := ""
		switch cmd := o.Cmd.(type) {
		case *episodesListCmd:
			got = cmd.config
		case *silenceQueryCmd:
			got = cmd.config
		case *runCmd:
			got = cmd.config
		case *scanCmd:
			got = cmd.config
		case *notifyTestCmd:
			got = cmd.config
		case *episodesResolveCmd:
			got = cmd.config
			if cmd.configBack() != "" {
				t.Errorf("%s: a config found without --config is named back as %q", c.name, cmd.configBack())
			}
		}
		if got != c.want {
			t.Errorf("%s: config %q, want %q", c.name, got, c.want)
		}
	}
	// $WATCHDOGD_CONFIG naming no file is said, not taken for the
	// defaults: exit 1, before anything is opened.
	p, _, errb := testProc(map[string]string{"WATCHDOGD_CONFIG": "/cfg/gone.yaml"}, imageConfig)
	if _, code, ok := parse(strings.Fields("silence query"), p); ok || code != exitFailure || errb.String() !=
		"watchdogd silence query: $WATCHDOGD_CONFIG is /cfg/gone.yaml, which does not exist: mount the config there, give --config FILE, or set WATCHDOGD_CONFIG= for the built-in defaults\n" {
		t.Errorf("a missing $WATCHDOGD_CONFIG: ok=%v code=%d %q", ok, code, errb.String())
	}
	// demo never takes one it was not given: the image sets
	// $WATCHDOGD_CONFIG and runs the demo with no config mounted.
	p, _, _ = testProc(map[string]string{"WATCHDOGD_CONFIG": "/cfg/w.yaml"}, imageConfig)
	if o, _, ok := parse([]string{"demo"}, p); !ok || o.Cmd.(*demoCmd).config != "" {
		t.Errorf("demo took a config it was not given")
	}
	for _, c := range []struct {
		env   map[string]string
		files []string
		want  string
	}{
		{map[string]string{"WATCHDOGD_CONFIG": "/cfg/w.yaml"}, nil, "/cfg/w.yaml"},
		{nil, []string{imageConfig}, imageConfig},
	} {
		p, _, _ := testProc(c.env, c.files...)
		o, _, ok := parse([]string{"check-config"}, p)
		if !ok || strings.Join(o.Cmd.(*checkConfigCmd).files, ",") != c.want {
			t.Errorf("check-config with no file: %+v, want %s", o.Cmd, c.want)
		}
	}
	p, _, errb = testProc(nil)
	if _, code, ok := parse([]string{"check-config"}, p); ok || code != exitUsage ||
		!strings.Contains(errb.String(), "check-config: needs at least one file: watchdogd check-config FILE… (or $WATCHDOGD_CONFIG, or "+imageConfig+")") {
		t.Errorf("check-config with no file and none to find: ok=%v code=%d %q", ok, code, errb.String())
	}
}
