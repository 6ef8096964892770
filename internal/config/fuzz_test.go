package config

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse: whatever the bytes, the loader returns a config or problems
// with a line and a field — never a panic, never both.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"", "schedule: \"@every 1m\"\n", "thresholds:\n  stall_after: 15m\n", "slack:\n  default_channel: C1\n  routes:\n    - match: {kind: stalled_turn}\n      channel: C2\n",
		"policy:\n  stalled_turn:\n    steps: [{after: 1s, action: slack}]\n", "silences:\n  - match: {task_id: t}\n    until: 2027-01-01T00:00:00Z\n",
		"quiet_hours: {start: '22:00', end: '07:00', days: [mon]}\n", "a: [", "database: {url: &x sqlite:///x.db, url_file: *x}\n", "- 1\n- 2\n",
		"slack:\n  routes:\n    - &r {channel: C1, match: {kind: stalled_turn}}\n    - <<: [*r]\n      channel: C2\n", "thresholds: &t\n  <<: *t\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse("fuzz.yaml", b, func(string) string { return "tok" })
		var p *Problems
		switch {
		case err == nil && c == nil:
			t.Fatal("no config and no error")
		case err != nil && c != nil:
			t.Fatal("a config and an error")
		case err != nil && !errors.As(err, &p):
			t.Fatalf("error is not *Problems: %v", err)
		case err != nil:
			for _, it := range p.Items {
				if it.Line < 0 || it.Field == "" || it.Msg == "" || strings.Contains(it.Msg, "\n") {
					t.Fatalf("malformed problem %+v", it)
				}
			}
		}
	})
}
