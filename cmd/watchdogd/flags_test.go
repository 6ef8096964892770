package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestParseArgs: what each command line becomes, and the one line (or the
// help) a mistake gets, with its exit code.
func TestParseArgs(t *testing.T) {
	cases := []struct {
		name   string
		args   string
		code   int  // exit code when parsing stops (0 with ok: parsed)
		ok     bool // parsed: the command runs
		stdout string
		stderr string
		check  func(parsed) bool
	}{
		{name: "flags after the ID, as people type them", args: "episodes show ep-1 --config w.yaml", ok: true,
			check: func(p parsed) bool {
				c, ok := p.cmd.(*episodesShowCmd)
				return ok && c.id == "ep-1" && c.config == "w.yaml"
			}},
		{name: "flags before the ID", args: "silence expire --config w.yaml s-1", ok: true,
			check: func(p parsed) bool {
				c, ok := p.cmd.(*silenceExpireCmd)
				return ok && c.id == "s-1" && c.config == "w.yaml"
			}},
		{name: "after -- an ID may start with a dash", args: "episodes resolve --config w.yaml -- -odd", ok: true,
			check: func(p parsed) bool { c, ok := p.cmd.(*episodesResolveCmd); return ok && c.id == "-odd" }},
		{name: "repeated --match, flags around nothing positional", args: "silence add --match kind=stalled_turn --for 2h --comment x --match session_id=s1", ok: true,
			check: func(p parsed) bool {
				c, ok := p.cmd.(*silenceAddCmd)
				return ok && len(c.match) == 2 && c.forDur.Hours() == 2 && c.comment == "x"
			}},
		{name: "episodes list keeps its default limit", args: "episodes list --open", ok: true,
			check: func(p parsed) bool { c, ok := p.cmd.(*episodesListCmd); return ok && c.open && c.limit == 500 }},
		// A subcommand that does not exist is a usage error before any
		// ledger is opened (it used to be noticed only after opening one,
		// so without a ledger the user was told about the ledger).
		{name: "unknown subcommand", args: "episodes bogus --config w.yaml", code: exitUsage,
			stderr: `watchdogd episodes: unknown subcommand "bogus", want one of list|show|resolve|retry (see watchdogd episodes -h)`},
		{name: "missing subcommand", args: "silence --config w.yaml", code: exitUsage,
			stderr: "watchdogd silence: missing subcommand, one of add|list|query|expire (see watchdogd silence -h)"},
		// amtool's spellings where ours differ.
		{name: "silence query is silence list", args: "silence query --config w.yaml --all", ok: true,
			check: func(p parsed) bool { c, ok := p.cmd.(*silenceListCmd); return ok && c.all && c.output == "table" }},
		{name: "silence add --duration is --for", args: "silence add --match kind=stalled_turn --duration 90m --comment x", ok: true,
			check: func(p parsed) bool { c, ok := p.cmd.(*silenceAddCmd); return ok && c.forDur.Minutes() == 90 }},
		{name: "-o is --output", args: "episodes show ep-1 -o json", ok: true,
			check: func(p parsed) bool { c, ok := p.cmd.(*episodesShowCmd); return ok && c.output == "json" }},
		{name: "--output json on episodes list", args: "episodes list --output json", ok: true,
			check: func(p parsed) bool { c, ok := p.cmd.(*episodesListCmd); return ok && c.output == "json" }},
		{name: "an output that does not exist", args: "silence list --output yaml", code: exitUsage,
			stderr: `watchdogd silence list: --output "yaml": want table or json`},
		{name: "a command's help lists its subcommands", args: "episodes -h", code: exitOK,
			stdout: "Usage: watchdogd episodes list|show|resolve|retry [flags]"},
		{name: "a subcommand's help shows only its flags", args: "silence list -h", code: exitOK,
			stdout: "Usage of watchdogd silence list:\n  -all"},
		{name: "a flag of another subcommand", args: "silence list --for 2h", code: exitUsage,
			stderr: "watchdogd silence list: flag provided but not defined: -for (see watchdogd silence list -h)"},
		{name: "retry takes an ID", args: "episodes retry ep-1 --config w.yaml", ok: true,
			check: func(p parsed) bool { c, ok := p.cmd.(*episodesRetryCmd); return ok && c.id == "ep-1" }},
		{name: "or none", args: "episodes retry --config w.yaml", ok: true,
			check: func(p parsed) bool { c, ok := p.cmd.(*episodesRetryCmd); return ok && c.id == "" }},
		{name: "but not two", args: "episodes retry a b", code: exitUsage, stderr: `watchdogd episodes retry: unexpected argument "a b"`},
		{name: "two IDs", args: "episodes show a b", code: exitUsage, stderr: "watchdogd episodes show: want exactly one ID, got 2"},
		{name: "an argument where none is taken", args: "episodes list extra", code: exitUsage,
			stderr: `watchdogd episodes list: unexpected argument "extra"`},
		{name: "unknown flag", args: "scan --bogus", code: exitUsage,
			stderr: "watchdogd scan: flag provided but not defined: -bogus (see watchdogd scan -h)"},
		{name: "--version, as Prometheus's tools take it", args: "--version", ok: true,
			check: func(p parsed) bool { _, ok := p.cmd.(*versionCmd); return ok && p.name == "version" }},
		{name: "check-config takes files", args: "check-config a.yaml b.yaml", ok: true,
			check: func(p parsed) bool {
				c, ok := p.cmd.(*checkConfigCmd)
				return ok && len(c.files) == 2 && c.files[1] == "b.yaml"
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			p, code, ok := parseArgs(strings.Fields(c.args), &out, &errb)
			if ok != c.ok || (!ok && code != c.code) {
				t.Fatalf("ok=%v code=%d, want ok=%v code=%d; stderr %q", ok, code, c.ok, c.code, errb.String())
			}
			if c.check != nil && !c.check(p) {
				t.Errorf("parsed to %q %+v", p.name, p.cmd)
			}
			if !strings.Contains(out.String(), c.stdout) {
				t.Errorf("stdout %q, want %q", out.String(), c.stdout)
			}
			if c.stderr != "" && strings.TrimSpace(errb.String()) != c.stderr {
				t.Errorf("stderr %q, want %q", errb.String(), c.stderr)
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
		"silence add --match kind=stalled_turn --for 1h --comment x", "silence list", "silence expire s-1",
		"episodes list", "episodes show ep-1", "episodes resolve ep-1", "episodes retry"} {
		args := append(strings.Fields(line), "--log.level=warn", "--log.format", "console")
		var out, errb bytes.Buffer
		p, _, ok := parseArgs(args, &out, &errb)
		if !ok || p.log.Level != "warn" || p.log.Format != "console" {
			t.Errorf("%s: ok=%v log=%+v stderr %q", line, ok, p.log, errb.String())
		}
	}
	for args, want := range map[string]string{
		"scan --log.level loud":     `watchdogd scan: --log.level "loud": want debug, info, warn or error (see watchdogd scan -h)`,
		"run --log.format=logfmt":   `watchdogd run: --log.format "logfmt": want json or console (see watchdogd run -h)`,
		"episodes list --log.level": "watchdogd episodes list: flag needs an argument: -log.level (see watchdogd episodes list -h)",
	} {
		var out, errb bytes.Buffer
		if _, code, ok := parseArgs(strings.Fields(args), &out, &errb); ok || code != exitUsage || strings.TrimSpace(errb.String()) != want {
			t.Errorf("%s: ok=%v code=%d stderr %q, want %q", args, ok, code, errb.String(), want)
		}
	}
}
