package app

import (
	"fmt"
	"strings"
	"testing"
)

// TestPageNamesUntitledTasks: an episode whose task has no title is still
// a visible link on the status page, named by the task's id.
func TestPageNamesUntitledTasks(t *testing.T) {
	data := pageData{LastScan: "never", Role: "leader"}.withEpisodes(
		[]episodeView{{Kind: "stalled_turn", TaskID: "t1", Link: "http://kandev/t/t1", Since: "2026-11-30T12:00:00Z"}})
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
	data := pageData{LastScan: "2026-12-01T05:20:00.5Z", Role: "leader"}.withEpisodes([]episodeView{{Kind: "stalled_turn", TaskID: "t1",
		Link: "http://kandev/t/t1", LastAction: &actionView{Action: "slack", State: "delivered", At: "2026-12-01T05:19:13.110532Z"}}})
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

// TestPageStorm: with more open episodes than the table shows, the page
// counts them all, by kind (the most first), shows the oldest pageRows,
// and says where the rest are; with few, it shows them all and says
// nothing of the kind.
func TestPageStorm(t *testing.T) {
	render := func(eps []episodeView) string {
		var b strings.Builder
		if err := pageTemplate.Execute(&b, pageData{LastScan: "never", Role: "leader"}.withEpisodes(eps)); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	var storm []episodeView
	for i := range 1200 {
		kind := "interrupted_session"
		if i%12 < 5 {
			kind = "stalled_turn"
		}
		// Oldest first, as episodes returns them.
		storm = append(storm, episodeView{Kind: kind, TaskID: fmt.Sprintf("t%04d", i), AgeSeconds: int64(5000 - i)})
	}
	page := render(storm)
	for _, want := range []string{"<title>watchdogd (1200)</title>", "1200 open ·",
		`<p class="kinds">interrupted session: 700 · stalled turn: 500</p>`,
		`The 500 oldest of 1200 are shown; <a href="api/v1/findings">/api/v1/findings</a> lists them all.`,
		">task t0499</a>"} {
		if !strings.Contains(page, want) {
			t.Errorf("storm page lacks %s", want)
		}
	}
	if n := strings.Count(page, `<tr class="episode"`); n != pageRows {
		t.Errorf("storm page has %d rows, want %d", n, pageRows)
	}
	if strings.Contains(page, ">task t0500</a>") {
		t.Error("storm page shows the 501st oldest episode")
	}
	page = render(storm[:2])
	if n := strings.Count(page, `<tr class="episode"`); n != 2 || strings.Contains(page, "oldest of") ||
		!strings.Contains(page, `<p class="kinds">stalled turn: 2</p>`) {
		t.Errorf("page of two episodes: %d rows\n%s", n, page)
	}
}
