package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestParseArgs: what each command line becomes, and the one line (or the
// help) a mistake gets, with its exit code. Every mistake is caught here,
// before a dataset is generated or a server started.
func TestParseArgs(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		code   int  // exit code when parsing stops
		ok     bool // parsed: the benchmark runs
		stdout string
		stderr string
		check  func(options) bool
	}{
		{name: "the defaults: every size, five runs, a 1 ms link", ok: true,
			check: func(o options) bool {
				return len(o.sizes) == 3 && o.sizes[0].Name == "small" && o.sizes[2].Name == "large" &&
					o.runs == 5 && o.rtt == time.Millisecond && o.binary == "bin/watchdogd" && o.pgSettings == nil
			}},
		{name: "sizes in the order given, spaces allowed", args: []string{"-sizes", "large, medium"}, ok: true,
			check: func(o options) bool {
				return len(o.sizes) == 2 && o.sizes[0].Name == "large" && o.sizes[1].Name == "medium"
			}},
		// Both settings are kept, in the order given.
		{name: "repeated -pg-set", args: []string{"-pg-set", "shared_buffers=4GB", "-pg-set", "work_mem=64MB"}, ok: true,
			check: func(o options) bool {
				return slices.Equal(o.pgSettings, []string{"shared_buffers=4GB", "work_mem=64MB"})
			}},
		{name: "a malformed setting", args: []string{"-pg-set", "shared_buffers"}, code: 2,
			stderr: `watchdogd-bench: invalid value "shared_buffers" for flag -pg-set: server setting "shared_buffers": want name=value, a lower-case name and a value without spaces or quotes (see watchdogd-bench -h)`},
		{name: "a setting that would smuggle in another option", args: []string{"-pg-set", "fsync=off -c x=y"}, code: 2,
			stderr: `want name=value`},
		{name: "unknown size", args: []string{"-sizes", "small,huge"}, code: 2,
			stderr: `watchdogd-bench: unknown size "huge", want small, medium or large`},
		{name: "no runs", args: []string{"-runs", "0"}, code: 2, stderr: "watchdogd-bench: -runs 0: want at least 1"},
		{name: "a negative link", args: []string{"-rtt", "-1ms"}, code: 2, stderr: "watchdogd-bench: -rtt -1ms: want 0 (skip) or more"},
		{name: "no link", args: []string{"-rtt", "0"}, ok: true, check: func(o options) bool { return o.rtt == 0 }},
		{name: "an argument", args: []string{"medium"}, code: 2, stderr: `watchdogd-bench: unexpected argument "medium"`},
		{name: "unknown flag", args: []string{"-bogus"}, code: 2,
			stderr: "watchdogd-bench: flag provided but not defined: -bogus (see watchdogd-bench -h)"},
		{name: "help", args: []string{"-h"}, code: 0, stdout: "Usage of watchdogd-bench:\n  -binary"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			o, code, ok := parseArgs(c.args, &stdout, &stderr)
			if ok != c.ok || (!ok && code != c.code) {
				t.Fatalf("parseArgs(%q) = code %d, ok %v; want code %d, ok %v (stderr %q)", c.args, code, ok, c.code, c.ok, stderr.String())
			}
			if c.check != nil && !c.check(o) {
				t.Errorf("parseArgs(%q) = %+v", c.args, o)
			}
			if !strings.Contains(stdout.String(), c.stdout) || (c.stdout == "" && stdout.Len() > 0) {
				t.Errorf("stdout %q, want it to hold %q", stdout.String(), c.stdout)
			}
			if !strings.Contains(stderr.String(), c.stderr) || (c.stderr == "" && stderr.Len() > 0) {
				t.Errorf("stderr %q, want it to hold %q", stderr.String(), c.stderr)
			}
		})
	}
}
