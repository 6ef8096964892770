package alertmanager

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/scan"
)

var (
	now   = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	since = now.Add(-42 * time.Minute)
	opts  = Options{Labels: map[string]string{"team": "agents"}, RunbookURL: "https://runbook.example/#findings",
		Severity: func(k model.Kind) string {
			if k == model.KindUnansweredClarification {
				return "info"
			}
			return "warning"
		}}
)

func TestAlertName(t *testing.T) {
	for kind, want := range map[model.Kind]string{
		model.KindStalledTurn: "KandevStalledTurn", model.KindUnansweredClarification: "KandevUnansweredClarification",
		model.KindMultipleOpenTurns: "KandevMultipleOpenTurns", model.KindNeverStarted: "KandevNeverStarted",
	} {
		if got := AlertName(kind); got != want {
			t.Errorf("AlertName(%s) = %s, want %s", kind, got, want)
		}
	}
}

// TestAlerts: an episode's alerts, firing or ended, and a question that
// changed kind ending the other kind's alert.
func TestAlerts(t *testing.T) {
	f := scan.Finding{Kind: model.KindStalledTurn, SessionID: "s1", TaskID: "t1", TaskTitle: "Fix <login>", WorkspaceID: "ws",
		Link: "http://kandev:38429/t/t1", AgeSeconds: 42 * 60, SinceTime: since}
	e := model.Episode{ID: "ep1", Kind: model.KindStalledTurn, SessionID: "s1", TaskID: "t1", WorkspaceID: "ws", Since: since}

	firing := Alerts(e, f, opts, time.Time{}, now)
	if len(firing) != 1 {
		t.Fatalf("%d alerts, want 1", len(firing))
	}
	a := firing[0]
	wantLabels := map[string]string{"alertname": "KandevStalledTurn", "kind": "stalled_turn", "episode_id": "ep1", "session_id": "s1",
		"task_id": "t1", "workspace_id": "ws", "severity": "warning", "team": "agents"}
	if len(a.Labels) != len(wantLabels) {
		t.Errorf("labels %v, want %v", a.Labels, wantLabels)
	}
	for k, v := range wantLabels {
		if a.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, a.Labels[k], v)
		}
	}
	switch {
	case a.StartsAt != "2026-12-03T11:18:00Z" || a.EndsAt != "":
		t.Errorf("startsAt %q endsAt %q, want the finding's since and no end", a.StartsAt, a.EndsAt)
	case a.Annotations["summary"] != "Stalled turn on Fix ‹login›":
		t.Errorf("summary %q", a.Annotations["summary"])
	case !strings.HasPrefix(a.Annotations["description"], "Agent stalled 42 min on Fix ‹login›. ") || strings.Contains(a.Annotations["description"], "&lt;"):
		t.Errorf("description %q: want Slack's words, plain", a.Annotations["description"])
	case a.Annotations["kandev_url"] != f.Link || a.Annotations["runbook_url"] != opts.RunbookURL || a.GeneratorURL != f.Link:
		t.Errorf("links %v, generatorURL %q", a.Annotations, a.GeneratorURL)
	}

	ext := opts
	ext.ExternalURL = "https://watchdogd.example"
	if got := Alerts(e, f, ext, time.Time{}, now)[0].GeneratorURL; got != ext.ExternalURL {
		t.Errorf("generatorURL %q, want the external URL", got)
	}

	resolved := Alerts(e, f, opts, now, now)
	if len(resolved) != 1 || resolved[0].EndsAt != "2026-12-03T12:00:00Z" {
		t.Errorf("resolved %+v, want one alert ended now", resolved)
	}

	// A question that turned shadowed: its shadowed alert fires, the
	// unanswered one ends now.
	q := e
	q.Kind, q.KindChanges = model.KindShadowedClarification, 1
	fq := f
	fq.Kind = model.KindShadowedClarification
	two := Alerts(q, fq, opts, time.Time{}, now)
	if len(two) != 2 || two[0].Labels["alertname"] != "KandevShadowedClarification" || two[0].EndsAt != "" ||
		two[1].Labels["alertname"] != "KandevUnansweredClarification" || two[1].EndsAt != "2026-12-03T12:00:00Z" ||
		two[1].Labels["severity"] != "info" {
		t.Errorf("after a kind change: %+v", two)
	}
	// Never changed: no second alert.
	q.KindChanges = 0
	if n := len(Alerts(q, fq, opts, time.Time{}, now)); n != 1 {
		t.Errorf("%d alerts for a question that never changed kind, want 1", n)
	}
}

func TestClassify(t *testing.T) {
	for status, want := range map[int]notify.Verdict{
		200: {}, 400: {Code: "400"}, 401: {Code: "401"}, 404: {Code: "404"},
		429: {Retry: true, RateLimited: true, Code: "429"}, 500: {Retry: true, Code: "500"}, 503: {Retry: true, Code: "503"},
	} {
		if got := Classify(status); got != want {
			t.Errorf("Classify(%d) = %+v, want %+v", status, got, want)
		}
	}
}

// TestPostToEveryMember: every member hears of the alerts, healthy or
// not; alerts one member took are delivered; a failure worth retrying
// wins over one that is not.
func TestPostToEveryMember(t *testing.T) {
	answering := func(status int, hits *int) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/prefix/api/v2/alerts" || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s %s %s", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
			}
			*hits++
			w.WriteHeader(status)
		}))
		t.Cleanup(s.Close)
		return s
	}
	var h1, h2, h3, h4 int
	ok, bad, down, ok2 := answering(200, &h1), answering(400, &h2), answering(503, &h3), answering(200, &h4)
	client := func(servers ...*httptest.Server) *Client {
		c := &Client{HTTP: http.DefaultClient, Timeout: 5 * time.Second}
		for _, s := range servers {
			c.URLs = append(c.URLs, s.URL+"/prefix/")
		}
		return c
	}
	alerts := []Alert{{Labels: map[string]string{"alertname": "KandevStalledTurn"}, StartsAt: "2026-12-03T11:18:00Z"}}
	if v, err := client(down, ok).Post(context.Background(), alerts); err != nil || v != (notify.Verdict{}) {
		t.Errorf("one member down, one took them: %v %+v", err, v)
	}
	if h3 != 1 || h1 != 1 {
		t.Errorf("hits down %d ok %d, want each once", h3, h1)
	}
	if _, err := client(ok, ok2).Post(context.Background(), alerts); err != nil || h1 != 2 || h4 != 1 {
		t.Errorf("two healthy members: %v, hits %d and %d, want each to hear of the alerts", err, h1-1, h4)
	}
	if v, err := client(bad, down).Post(context.Background(), alerts); err == nil || !v.Retry {
		t.Errorf("refused by one, down at the other: %v %+v, want an error worth retrying", err, v)
	}
	if v, err := client(bad).Post(context.Background(), alerts); err == nil || v.Retry || !strings.Contains(err.Error(), "400") {
		t.Errorf("refused: %v %+v, want a failure for good naming the status", err, v)
	}
}

// TestInert: what an agent wrote reaches an annotation looking as written
// and holding nothing a Slack or email template acts on: no < or > (no
// mention, link or quote), no *, _, ~ or ` (no formatting), no & or @
// that an entity or a named mention could start from; cut to its bound.
func TestInert(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"<!channel> <https://evil.example|click>", "\u2039!channel\u203a \u2039https://evil.example|click\u203a"},
		{"*bold* _it_ ~no~ `rm -rf /`", "\u2217bold\u2217 \u02cdit\u02cd \u223cno\u223c \u02cbrm -rf /\u02cb"},
		{"&lt;b&gt; & @here @channel", "&\u200blt;b&\u200bgt; &\u200b @\u200bhere @\u200bchannel"},
		{"> quoted\nplain", "\u203a quoted\nplain"},
		{"pgx or lib/pq?", "pgx or lib/pq?"},
	} {
		if got := Inert(c.in, 100); got != c.want {
			t.Errorf("Inert(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	long := Inert(strings.Repeat("<a>", 2000), MaxSummary)
	if n := len([]rune(long)); n != MaxSummary || !strings.HasSuffix(long, model.CutMark) || strings.ContainsAny(long, "<>") {
		t.Errorf("a long summary: %d characters, ends %q", n, long[len(long)-12:])
	}
	f := scan.Finding{Kind: model.KindUnansweredClarification, SessionID: "s1", TaskID: "t1", TaskTitle: strings.Repeat("<!channel> ", 300),
		Detail: &scan.Detail{Questions: []scan.Question{{ID: "q1", Prompt: strings.Repeat("*x* ", 1500)}}}}
	a := Alerts(model.Episode{ID: "e", Kind: f.Kind}, f, opts, time.Time{}, now)[0]
	for name, limit := range map[string]int{"summary": MaxSummary, "description": MaxDescription} {
		if v := a.Annotations[name]; len([]rune(v)) > limit || strings.ContainsAny(v, "<>*") {
			t.Errorf("%s: %d characters, or markup left", name, len([]rune(v)))
		}
	}
}
