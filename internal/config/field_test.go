package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"gopkg.in/yaml.v3"
)

// TestScheduleNeverPanics: robfig/cron v3.0.1 panics on a time zone with
// no schedule after it; each is a problem on the schedule's line instead.
// A time zone followed by a schedule still works.
func TestScheduleNeverPanics(t *testing.T) {
	for _, spec := range []string{"TZ=UTC", "TZ=0", "CRON_TZ=", "CRON_TZ=Europe/Berlin", "TZ=UTC\t0 9 * * *"} {
		text := "log:\n  level: info\nschedule: \"" + strings.ReplaceAll(spec, "\t", `\t`) + "\"\n"
		_, err := Parse("s.yaml", []byte(text), noEnv)
		var p *Problems
		if !errors.As(err, &p) || len(p.Items) != 1 || p.Items[0].Line != 3 || p.Items[0].Field != "schedule" {
			t.Errorf("schedule %q: %v, want one problem at s.yaml:3: schedule", spec, err)
		}
	}
	for _, spec := range []string{"CRON_TZ=Europe/Berlin 0 9 * * 1-5", "TZ=UTC @every 1m"} {
		if _, err := ParseSchedule(spec); err != nil {
			t.Errorf("ParseSchedule(%q): %v", spec, err)
		}
	}
}

// countNodes counts a YAML tree's nodes, an alias as one.
func countNodes(n *yaml.Node) int {
	c := 1
	for _, ch := range n.Content {
		c += countNodes(ch)
	}
	return c
}

// aliasBomb is a config of about 13 KB (n = 1000): an anchored mapping of
// n keys, none a field of where it is anchored, then n aliases (or merge
// keys) to it where each would decode it again.
func aliasBomb(n int, merge bool) string {
	var b strings.Builder
	b.WriteString("thresholds: &t {")
	for i := range n {
		fmt.Fprintf(&b, "k%d: 1, ", i)
	}
	b.WriteString("}\npolicy:\n  stalled_turn:\n    steps: [")
	for range n {
		if merge {
			b.WriteString("{<<: *t}, ")
		} else {
			b.WriteString("*t, ")
		}
	}
	b.WriteString("]\n")
	return b.String()
}

// TestAliasesExpandedOnce: an anchor whose keys are problems is decoded
// once, not once per alias or merge key, so the work is a small multiple of
// the file's nodes (not a million keys walked for these 13 KB files), and
// its problems are reported once, at the anchor's lines.
func TestAliasesExpandedOnce(t *testing.T) {
	for name, merge := range map[string]bool{"aliases": false, "merge keys": true} {
		text := aliasBomb(1000, merge)
		var root yaml.Node
		if err := yaml.Unmarshal([]byte(text), &root); err != nil {
			t.Fatal(err)
		}
		d := &decoder{lines: map[string]int{}, getenv: noEnv}
		_, err := parse("a.yaml", []byte(text), d)
		var p *Problems
		if !errors.As(err, &p) {
			t.Fatalf("%s: %v", name, err)
		}
		nodes := countNodes(&root)
		if d.visits > 3*nodes {
			t.Errorf("%s: %d visits for %d nodes", name, d.visits, nodes)
		}
		// The anchor's 1,000 unknown keys, once each (as thresholds' and
		// as the first step's), all on line 1.
		if len(p.Items) > 2000 || p.Items[0].Line != 1 || p.Items[len(p.Items)-1].Line != 1 {
			t.Errorf("%s: %d problems, from line %d to %d", name, len(p.Items), p.Items[0].Line, p.Items[len(p.Items)-1].Line)
		}
	}
}

// TestCleanAliasesDecodedAtEachUse: an anchor without problems still gives
// each alias (and merge key) to it its value.
func TestCleanAliasesDecodedAtEachUse(t *testing.T) {
	text := "policy:\n  stalled_turn:\n    steps: [&s {after: 5m, action: slack}, *s, {<<: *s, mention: true}]\n  never_started: &p\n    steps: *x\n"
	text = strings.Replace(text, "*x", "[*s]", 1) + "  interrupted_session: *p\n"
	c, err := Parse("a.yaml", []byte(text), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := model.Step{After: 5 * time.Minute, Action: "slack"}
	st := c.Policy["stalled_turn"].Steps
	if len(st) != 3 || st[0] != want || st[1] != want || st[2] != (model.Step{After: 5 * time.Minute, Action: "slack", Mention: true}) {
		t.Errorf("stalled_turn steps %+v", st)
	}
	for _, k := range []model.Kind{"never_started", "interrupted_session"} {
		if s := c.Policy[k].Steps; len(s) != 1 || s[0] != want {
			t.Errorf("%s steps %+v", k, s)
		}
	}
	if c.Policy["never_started"].Text == c.Policy["interrupted_session"].Text {
		t.Error("two policies decoded from one anchor share their defaults")
	}
}
