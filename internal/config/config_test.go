package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

func noEnv(string) string { return "" }

// TestBadConfigs: each testdata/bad-*.yaml has exactly one problem, and its
// message is the line in testdata/bad.golden, exactly.
func TestBadConfigs(t *testing.T) {
	golden, err := os.ReadFile("testdata/bad.golden")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(golden)), "\n") {
		file := l[:strings.Index(l, ":")]
		want[file] = l
	}
	files, _ := filepath.Glob("testdata/bad-*.yaml")
	if len(files) < 30 || len(files) != len(want) {
		t.Fatalf("%d bad files, %d golden lines", len(files), len(want))
	}
	for _, f := range files {
		_, err := Load(f, noEnv)
		var p *Problems
		if !errors.As(err, &p) {
			t.Errorf("%s: %v, want problems", f, err)
			continue
		}
		if got := p.Lines(); len(got) != 1 || got[0] != want[f] {
			t.Errorf("%s:\n got %q\nwant %q", f, got, want[f])
		}
	}
}

// TestAllProblemsAtOnce: every problem of a file is reported, in line order.
func TestAllProblemsAtOnce(t *testing.T) {
	text := "schedule: nope\nthresholds:\n  stall_after: soon\nlog:\n  level: loud\nextra: 1\n"
	_, err := Parse("c.yaml", []byte(text), noEnv)
	var p *Problems
	if !errors.As(err, &p) || len(p.Items) != 4 {
		t.Fatalf("%v", err)
	}
	var lines []int
	for _, it := range p.Items {
		lines = append(lines, it.Line)
	}
	if !sort.IntsAreSorted(lines) {
		t.Errorf("problems not in line order: %v", lines)
	}
}

// TestDefaults: an empty file is the documented defaults.
func TestDefaults(t *testing.T) {
	c, err := Parse("empty.yaml", nil, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string][2]any{
		"schedule":       {c.Schedule, "@every 1m"},
		"scan_timeout":   {c.Database.ScanTimeout, 30 * time.Second},
		"cycle_timeout":  {c.CycleTimeout, 2 * time.Minute},
		"base_url":       {c.Kandev.BaseURL, "http://localhost:38429"},
		"rule":           {c.Kandev.CurrentTurnRule, "pre_spec"},
		"kandev.timeout": {c.Kandev.Timeout, 15 * time.Second},
		"stall_after":    {c.Thresholds.StallAfter, 15 * time.Minute},
		"never_started":  {c.Thresholds.NeverStartedAfter, 10 * time.Minute},
		"interrupted":    {c.Thresholds.InterruptedAfter, 10 * time.Minute},
		"state.url":      {c.State.URL, "sqlite://watchdogd-state.db"},
		"claim_ttl":      {c.State.ClaimTTL, 2 * time.Minute},
		"retention":      {c.State.Retention, 720 * time.Hour},
		"lease_ttl":      {c.HA.LeaseTTL, 30 * time.Second},
		"listen":         {c.HTTP.Listen, "127.0.0.1:9464"},
		"ui":             {c.UIEnabled(), true},
		"pprof":          {c.HTTP.PProf, false},
		"log.level":      {c.Log.Level, "info"},
		"slack":          {c.Slack == nil, true},
		"policy kinds":   {len(c.Policy), 7},
		"stalled steps":  {len(c.Policy["stalled_turn"].Steps), 2},
		"clarif. repeat": {c.Policy["unanswered_clarification"].RepeatEvery, time.Hour},
		"open turns":     {c.Policy["multiple_open_turns"].Steps[0].Action, model.ActionLog},
	}
	for name, v := range checks {
		if !reflect.DeepEqual(v[0], v[1]) {
			t.Errorf("%s = %v, want %v", name, v[0], v[1])
		}
	}
	// Slack defaults apply per block.
	c, err = Parse("s.yaml", []byte("slack:\n  default_channel: C1\n"), func(string) string { return "xoxb" })
	if err != nil {
		t.Fatal(err)
	}
	if c.Slack.Timeout != 10*time.Second || c.Slack.MaxMessagesPerCycle != 20 || c.Slack.APIURL != "https://slack.com/api/" {
		t.Errorf("slack defaults %+v", c.Slack)
	}
}

// TestShippedConfigs: the defaults file, the demo config and every example
// in config/examples load.
func TestShippedConfigs(t *testing.T) {
	env := func(k string) string {
		if k == "WATCHDOGD_SLACK_TOKEN" {
			return "xoxb-example"
		}
		return ""
	}
	examples, _ := filepath.Glob("../../config/examples/*.yaml")
	if len(examples) < 6 {
		t.Fatalf("%d files in config/examples", len(examples))
	}
	for _, f := range append([]string{"../../config/watchdogd.yaml", "../../config/demo.yaml"}, examples...) {
		if _, err := Load(f, env); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestShippedConfigsOptionalBlocks: the defaults file's commented-out
// blocks (slack:, alertmanager:, webhooks:, silences:, quiet_hours:) load
// too once uncommented, so the file documents keys that exist and values
// that pass.
func TestShippedConfigsOptionalBlocks(t *testing.T) {
	b, err := os.ReadFile("../../config/watchdogd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	inBlock, blocks := false, 0
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case line == "# slack:" || line == "# alertmanager:" || line == "# webhooks:" || line == "# silences:" || line == "# quiet_hours:":
			inBlock, blocks = true, blocks+1
			line = line[2:]
		case inBlock && strings.HasPrefix(line, "#   "):
			line = line[2:]
		default:
			inBlock = false
		}
		out = append(out, line)
	}
	if blocks != 5 {
		t.Fatalf("found %d commented blocks, want slack:, alertmanager:, webhooks:, silences: and quiet_hours:", blocks)
	}
	c, err := Parse("watchdogd.yaml", []byte(strings.Join(out, "\n")), func(k string) string { return map[string]string{"WATCHDOGD_SLACK_TOKEN": "x"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Alertmanager == nil || len(c.Webhooks) != 1 || c.Alertmanager.HTTPConfig.BasicAuth == nil {
		t.Errorf("alertmanager %+v, webhooks %+v", c.Alertmanager, c.Webhooks)
	}
	if c.Slack == nil || len(c.Slack.Routes) != 1 || c.Slack.Interactivity == nil || len(c.Silences) != 1 || c.QuietHours == nil {
		t.Errorf("slack %+v, silences %+v, quiet hours %+v", c.Slack, c.Silences, c.QuietHours)
	}
}

// TestSecretPrintsRedacted: a Secret never prints its value.
func TestSecretPrintsRedacted(t *testing.T) {
	s := Secret("xoxb-very-secret")
	for _, out := range []string{s.String(), s.GoString()} {
		if strings.Contains(out, "very-secret") {
			t.Fatalf("secret printed: %s", out)
		}
	}
	if b, _ := s.MarshalJSON(); strings.Contains(string(b), "very-secret") {
		t.Fatal("secret in JSON")
	}
}

// TestMergeKeys: YAML merge keys work as in yaml.v3's own decoder. A key
// written in the mapping wins over a merged one, an earlier merged mapping
// over a later one, and merged keys are checked like written ones.
func TestMergeKeys(t *testing.T) {
	text := `slack:
  token_file: /x
  default_channel: C0123456789
  routes:
    - &team {match: {workspace_id: ws-a}, channel: C0000000001, mention: "<!here>"}
    - <<: *team
      match: {workspace_id: ws-b}
policy:
  pending_permission:
    steps:
      - &first {after: 0s, action: slack}
      - &late {after: 30m, action: log}
      - <<: [*first, *late]
        after: 1h
        mention: true
`
	c, err := Parse("m.yaml", []byte(text), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Slack.Routes
	if len(r) != 2 || r[1].Channel != "C0000000001" || r[1].Mention != "<!here>" || r[1].Match.WorkspaceID != "ws-b" {
		t.Errorf("routes %+v", r)
	}
	// after is written, action comes from *first (before *late), mention is written.
	steps := c.Policy["pending_permission"].Steps
	if want := (model.Step{After: time.Hour, Action: "slack", Mention: true}); len(steps) != 3 || steps[2] != want {
		t.Errorf("steps %+v, want the last %+v", steps, want)
	}
	_, err = Parse("m.yaml", []byte("thresholds:\n  base: &b {stall_after: 20m}\n  <<: *b\n"), noEnv)
	var p *Problems
	if !errors.As(err, &p) || len(p.Items) != 1 || p.Items[0].Line != 2 {
		t.Errorf("an unknown key is refused where the anchor defines it, once: %v", err)
	}
}

// TestMergeKeysRefused: a merge key that names something other than
// mappings, or a mapping that contains it, is a problem on the merge key's
// line — never an endless walk.
func TestMergeKeysRefused(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"thresholds: &t\n  stall_after: 20m\n  <<: *t\n", `m.yaml:3: thresholds.<<: a merge key refers to a mapping that contains it`},
		{"thresholds:\n  <<: [{stall_after: 20m}, 5m]\n", `m.yaml:2: thresholds.<<: a merge key takes a mapping or a list of mappings, got "5m"`},
	} {
		_, err := Parse("m.yaml", []byte(tc.text), noEnv)
		var p *Problems
		if !errors.As(err, &p) || len(p.Lines()) != 1 || p.Lines()[0] != tc.want {
			t.Errorf("%q: %v, want %s", tc.text, err, tc.want)
		}
	}
}

// TestMergeKeysNested: anchors that merge anchors twice over, 40 deep, are
// expanded once each (2^40 walks otherwise: the test would never end).
func TestMergeKeysNested(t *testing.T) {
	s := "&l0 {stall_after: 20m}"
	for i := 1; i <= 40; i++ {
		s = fmt.Sprintf("&l%d {<<: [%s, *l%d]}", i, s, i-1)
	}
	c, err := Parse("m.yaml", []byte("thresholds:\n  <<: "+s+"\n"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Thresholds.StallAfter != 20*time.Minute {
		t.Errorf("stall_after %v", c.Thresholds.StallAfter)
	}
}

// TestQuietHoursZoneLoaded: validation keeps the loaded zone, which the
// quiet-hours check uses instead of reading tzdata for every due action.
func TestQuietHoursZoneLoaded(t *testing.T) {
	c, err := Parse("q.yaml", []byte("quiet_hours: {timezone: Europe/Berlin, start: '22:00', end: '07:00'}\n"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if loc := c.QuietHours.Location; loc == nil || loc.String() != "Europe/Berlin" {
		t.Errorf("location %v", loc)
	}
}

// TestOutletDefaults: an alertmanager: block and webhooks take their
// defaults, and a webhook step names the only webhook when it says none.
func TestOutletDefaults(t *testing.T) {
	text := `alertmanager:
  urls: ["http://alertmanager:9093"]
  severity: {unanswered_clarification: info}
webhooks:
  - {name: ops-hook, url: "https://hooks.example.com/w", secret_file: /s}
policy:
  stalled_turn:
    steps:
      - {after: 0s, action: alertmanager}
      - {after: 10m, action: webhook}
`
	c, err := Parse("c.yaml", []byte(text), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Alertmanager
	switch {
	case a.ResendInterval != time.Minute || a.Timeout != 10*time.Second || !strings.HasSuffix(a.RunbookURL, "docs/runbook.md#what-a-finding-means-and-what-to-do"):
		t.Errorf("alertmanager defaults %+v", a)
	case a.SeverityOf(model.KindUnansweredClarification) != "info" || a.SeverityOf(model.KindStalledTurn) != "warning":
		t.Errorf("severities %v", a.Severity)
	case c.Webhooks[0].Timeout != 10*time.Second:
		t.Errorf("webhook timeout %s", c.Webhooks[0].Timeout)
	case c.Policy[model.KindStalledTurn].Steps[1].Webhook != "ops-hook":
		t.Errorf("webhook step %+v, want it to name the only webhook", c.Policy[model.KindStalledTurn].Steps[1])
	}
	if got := c.OutletFiles(); len(got) != 1 || got[0] != [2]string{"webhooks[0].secret_file", "/s"} {
		t.Errorf("outlet files %v", got)
	}
}
