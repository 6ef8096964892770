package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"go.yaml.in/yaml/v3"
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

// ladderBomb is a clean config (every step valid) of about 28 KB for
// n = 1500: a policy anchored with 400 steps, then n policies that are
// aliases to it (or merge it), each of which decodes its 400 steps again;
// unknown policy kinds are refused only by validation, after decoding.
func ladderBomb(n int, merge bool) string {
	var b strings.Builder
	b.WriteString("policy: {stalled_turn: &p {steps: [")
	for i := range 400 {
		fmt.Fprintf(&b, "{after: %dm, action: slack}, ", i+1)
	}
	b.WriteString("]}")
	for i := range n {
		if merge {
			fmt.Fprintf(&b, ", x%d: {<<: *p}", i)
		} else {
			fmt.Fprintf(&b, ", x%d: *p", i)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// TestAliasBombRefused: however an anchor is used, decoding a file costs
// at most budgetPerNode visits a node (plus budgetFloor; plus one a level
// to stop) and a file that would cost more is refused with one problem at
// the alias where the budget ran out, instead of 600,000 steps decoded
// from 28 KB.
func TestAliasBombRefused(t *testing.T) {
	for name, merge := range map[string]bool{"aliases": false, "merge keys": true} {
		text := ladderBomb(1500, merge)
		var root yaml.Node
		if err := yaml.Unmarshal([]byte(text), &root); err != nil {
			t.Fatal(err)
		}
		nodes := countNodes(&root)
		d := &decoder{lines: map[string]int{}, getenv: noEnv}
		_, err := parse("bomb.yaml", []byte(text), d)
		if budget := budgetPerNode*nodes + budgetFloor; d.visits > budget+10 {
			t.Errorf("%s: %d visits for %d nodes (%d bytes), want at most %d", name, d.visits, nodes, len(text), budget+10)
		}
		var p *Problems
		if !errors.As(err, &p) || len(p.Items) != 1 || p.Items[0].Line != 1 ||
			!strings.HasPrefix(p.Items[0].Field, "policy.x") || !strings.Contains(p.Items[0].Msg, "aliases expand it too much") {
			t.Errorf("%s: %v, want one problem saying the aliases expand the file too much", name, err)
		}
	}
}

// TestSharedLadderWithinBudget: what anchors are for (every policy
// aliasing one shared ladder, routes merging one base) stays far inside
// the budget.
func TestSharedLadderWithinBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString("slack:\n  token_file: /t\n  default_channel: C1\n  routes:\n")
	b.WriteString("    - &r {match: {workspace_id: w0}, channel: C2, mention: \"<!here>\"}\n")
	for i := 1; i < 50; i++ {
		fmt.Fprintf(&b, "    - {<<: *r, match: {workspace_id: w%d}}\n", i)
	}
	b.WriteString("policy:\n  stalled_turn: &p\n    steps:\n")
	for i := range 20 {
		fmt.Fprintf(&b, "      - {after: %dm, action: slack}\n", i+1)
	}
	for _, k := range []string{"never_started", "interrupted_session", "unanswered_clarification", "pending_permission"} {
		fmt.Fprintf(&b, "  %s: *p\n", k)
	}
	d := &decoder{lines: map[string]int{}, getenv: noEnv}
	if _, err := parse("shared.yaml", []byte(b.String()), d); err != nil {
		t.Fatal(err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(b.String()), &root); err != nil {
		t.Fatal(err)
	}
	if nodes := countNodes(&root); d.visits > 5*nodes {
		t.Errorf("%d visits for %d nodes", d.visits, nodes)
	}
}
