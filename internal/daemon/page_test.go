package daemon

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// page renders v's status page.
func page(t *testing.T, v *view) string {
	t.Helper()
	b, err := v.pageBody()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPageNamesUntitledTasks: an episode whose task has no title is still
// a visible link on the status page, named by the task's id.
func TestPageNamesUntitledTasks(t *testing.T) {
	v := &view{total: 1, episodes: []episodeView{{Kind: "stalled_turn", TaskID: "t1", Link: "http://kandev/t/t1", Since: "2026-11-30T12:00:00Z"}}}
	if p := page(t, v); !strings.Contains(p, `<a href="http://kandev/t/t1">task t1</a>`) {
		t.Fatalf("no link named after the task's id:\n%s", p)
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
	v := &view{total: 1, leader: true, lastOK: time.Date(2026, 12, 1, 5, 20, 0, 5e8, time.UTC), episodes: []episodeView{{Kind: "stalled_turn", TaskID: "t1",
		Link: "http://kandev/t/t1", LastAction: &actionView{Action: "slack", State: "delivered", At: "2026-12-01T05:19:13.110532Z"}}}}
	p := page(t, v)
	for _, w := range []string{`last scan 2026-12-01 05:20:00 UTC`, `<time class="muted" datetime="2026-12-01T05:19:13.110532Z">2026-12-01 05:19:13 UTC</time>`} {
		if !strings.Contains(p, w) {
			t.Errorf("page lacks %s:\n%s", w, p)
		}
	}
	if !strings.Contains(page(t, &view{}), "last scan never") {
		t.Error("a view before any successful scan does not say never")
	}
}

// storm is n open episodes, the i-th opened 5000-i seconds before now,
// five in twelve stalled turns and the rest interrupted sessions.
func storm(n int, now time.Time) []model.Episode {
	var eps []model.Episode
	for i := range n {
		kind := model.KindInterruptedSession
		if i%12 < 5 {
			kind = model.KindStalledTurn
		}
		eps = append(eps, model.Episode{ID: fmt.Sprint(i), Kind: kind, TaskID: fmt.Sprintf("t%04d", i), Since: now.Add(time.Duration(i-5000) * time.Second)})
	}
	return eps
}

// stalled counts the stalled turns in storm(n).
func stalled(n int) int { return n/12*5 + min(n%12, 5) }

// TestPageStorm: with more open episodes than the table shows, the page
// counts them all, by kind (the most first), shows the oldest pageRows,
// and says where more are: the API, which lists the oldest viewRows, and
// the CLI for the rest; with few, it shows them all and says nothing of
// the kind.
func TestPageStorm(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		n    int
		more string
	}{
		{1000, `The 500 oldest of 1000 are shown; <a href="api/v1/findings">/api/v1/findings</a> lists them all.`},
		{1200, `The 500 oldest of 1200 are shown; <a href="api/v1/findings">/api/v1/findings</a> lists the 1000 oldest, <code>watchdogd episodes list --open</code> all.`},
	} {
		p := page(t, newView(storm(c.n, now), nil, "http://kandev", now))
		for _, want := range []string{fmt.Sprintf("<title>watchdogd (%d)</title>", c.n), fmt.Sprintf("%d open ·", c.n),
			fmt.Sprintf(`<p class="kinds">interrupted session: %d · stalled turn: %d</p>`, c.n-stalled(c.n), stalled(c.n)),
			c.more, ">task t0499</a>"} {
			if !strings.Contains(p, want) {
				t.Errorf("storm of %d: the page lacks %s", c.n, want)
			}
		}
		if n := strings.Count(p, `<tr class="episode"`); n != pageRows {
			t.Errorf("storm of %d: the page has %d rows, want %d", c.n, n, pageRows)
		}
		if strings.Contains(p, ">task t0500</a>") {
			t.Errorf("storm of %d: the page shows the 501st oldest episode", c.n)
		}
	}
	p := page(t, newView(storm(2, now), nil, "http://kandev", now))
	if n := strings.Count(p, `<tr class="episode"`); n != 2 || strings.Contains(p, "oldest of") ||
		!strings.Contains(p, `<p class="kinds">stalled turn: 2</p>`) {
		t.Errorf("page of two episodes: %d rows\n%s", n, p)
	}
}
