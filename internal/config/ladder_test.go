package config

import (
	"strings"
	"testing"
)

// TestLadderWarnings: a valid ladder whose later step to the same
// destination can only ever be due together with an earlier one (its after
// at or below the kind's threshold, since after counts from when the
// condition began) is warned of, saying what will happen; steps to other
// destinations are not, nor steps past the threshold.
func TestLadderWarnings(t *testing.T) {
	const head = "slack:\n  token_file: /x\n  default_channel: C1\nalertmanager:\n  urls: [\"http://am:9093\"]\n" +
		"webhooks:\n  - {name: ops, url: \"https://hooks.example/ops\", secret_file: /x}\n  - {name: audit, url: \"https://hooks.example/audit\", secret_file: /x}\n"
	cases := []struct {
		name, yaml string
		want       []string // each warning's start, in order
	}{
		// Slack now, Alertmanager a second later: both go out.
		{"other destinations", "policy:\n  stalled_turn:\n    steps:\n      - {after: 0s, action: slack}\n      - {after: 1s, action: alertmanager}\n", nil},
		// A mention 10m in on a 15m stall: the first post never goes.
		{"same destination under the threshold", "policy:\n  stalled_turn:\n    steps:\n      - {after: 0s, action: slack}\n      - {after: 1s, action: alertmanager}\n      - {after: 10m, action: slack, mention: true}\n",
			[]string{"test.yaml:14: policy.stalled_turn.steps[2].after: 10m is at or below thresholds.stall_after (15m), and after counts from when the condition began: " +
				"it is due as soon as the episode opens, together with steps[0] (both to Slack), and only steps[2] is sent there: steps[0] never is; raise this after above 15m to send both"}},
		// At the threshold exactly is still together.
		{"at the threshold", "policy:\n  never_started:\n    steps:\n      - {after: 0s, action: cancel_and_nudge}\n      - {after: 10m, action: cancel_and_nudge}\n",
			[]string{"test.yaml:13: policy.never_started.steps[1].after: 10m is at or below thresholds.never_started_after (10m)"}},
		{"past the threshold", "policy:\n  never_started:\n    steps:\n      - {after: 0s, action: slack}\n      - {after: 11m, action: slack}\n", nil},
		// Two webhooks are two destinations; one webhook twice is one.
		{"two webhooks", "policy:\n  stalled_turn:\n    steps:\n      - {after: 0s, action: webhook, webhook: ops}\n      - {after: 5m, action: webhook, webhook: audit}\n", nil},
		{"one webhook twice", "policy:\n  stalled_turn:\n    steps:\n      - {after: 0s, action: webhook, webhook: ops}\n      - {after: 5m, action: webhook, webhook: ops}\n",
			[]string{"test.yaml:13: policy.stalled_turn.steps[1].after: 5m is at or below thresholds.stall_after (15m)"}},
		// A threshold raised over a default ladder's later step.
		{"default ladder", "thresholds:\n  clarification_after: 2h\n",
			[]string{"test.yaml:10: thresholds.clarification_after: 2h is at or above the after of the default ladder's steps[1] for unanswered_clarification (1h)"}},
	}
	for _, c := range cases {
		cfg, err := Parse("test.yaml", []byte(head+c.yaml), func(string) string { return "" })
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := cfg.Warnings()
		if len(got) != len(c.want) {
			t.Errorf("%s: warnings %q, want %d", c.name, got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.HasPrefix(got[i], w) {
				t.Errorf("%s: warning\n %q\nwant it to start\n %q", c.name, got[i], w)
			}
		}
	}
	// The default ladders under the default thresholds say nothing.
	cfg, err := Parse("test.yaml", []byte(head), func(string) string { return "" })
	if err != nil || len(cfg.Warnings()) != 0 {
		t.Errorf("the defaults: %v, warnings %q", err, cfg.Warnings())
	}
}
