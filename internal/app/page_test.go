package app

import (
	"strings"
	"testing"
)

// TestPageNamesUntitledTasks: an episode whose task has no title is still
// a visible link on the status page, named by the task's id.
func TestPageNamesUntitledTasks(t *testing.T) {
	data := pageData{Episodes: []episodeView{{Kind: "stalled_turn", TaskID: "t1", Link: "http://kandev/t/t1", Since: "2026-11-30T12:00:00Z"}},
		LastScan: "never", Role: "leader"}
	var b strings.Builder
	if err := pageTemplate.Execute(&b, data); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<a href="http://kandev/t/t1">task t1</a>`) {
		t.Fatalf("no link named after the task's id:\n%s", b.String())
	}
}

// TestPageClock: the page shows instants to the second, in UTC, and the
// full value in the time element; "never" stays as it is.
func TestPageClock(t *testing.T) {
	for in, want := range map[string]string{
		"2026-12-01T05:19:13.110532Z": "2026-12-01 05:19:13 UTC",
		"2026-12-01T06:19:13.9+01:00": "2026-12-01 05:19:13 UTC",
		"never":                       "never",
		"":                            "",
	} {
		if got := clock(in); got != want {
			t.Errorf("clock(%q) = %q, want %q", in, got, want)
		}
	}
	data := pageData{Episodes: []episodeView{{Kind: "stalled_turn", TaskID: "t1", Link: "http://kandev/t/t1",
		LastAction: &actionView{Action: "slack", State: "delivered", At: "2026-12-01T05:19:13.110532Z"}}},
		LastScan: "2026-12-01T05:20:00.5Z", Role: "leader"}
	var b strings.Builder
	if err := pageTemplate.Execute(&b, data); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`last scan 2026-12-01 05:20:00 UTC`, `<time class="muted" datetime="2026-12-01T05:19:13.110532Z">2026-12-01 05:19:13 UTC</time>`} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("page lacks %s:\n%s", w, b.String())
		}
	}
}
