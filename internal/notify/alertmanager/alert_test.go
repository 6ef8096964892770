package alertmanager

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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

// TestPostToOneMember: an action goes to its member only (each member is
// its own lane); a member's answer is classified; a resend goes to every
// member, and one member down or hung keeps none of the others from
// hearing of it.
func TestPostToOneMember(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	answering := func(name string, status int, delay time.Duration) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/prefix/api/v2/alerts" || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s %s %s", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
			}
			mu.Lock()
			hits[name]++
			mu.Unlock()
			time.Sleep(delay)
			w.WriteHeader(status)
		}))
		t.Cleanup(s.Close)
		return s
	}
	ok, bad, down, hung := answering("ok", 200, 0), answering("bad", 400, 0), answering("down", 503, 0), answering("hung", 200, 1500*time.Millisecond)
	o := &Outlet{Client: &Client{HTTP: http.DefaultClient, Timeout: time.Second}, Options: opts}
	for _, s := range []*httptest.Server{ok, bad, down, hung} {
		o.Client.URLs = append(o.Client.URLs, s.URL+"/prefix/")
	}
	body, _ := json.Marshal([]Alert{{Labels: map[string]string{"alertname": "KandevStalledTurn"}, StartsAt: "2026-12-03T11:18:00Z"}})
	seen := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(hits)
	}
	send := func(member string) notify.Sent {
		return o.Send(context.Background(), notify.Attempt{Action: model.Action{Channel: member, Body: string(body)}})
	}
	if s := send(""); s.Outcome == nil || s.Outcome.State != model.StateDelivered || seen()["ok"] != 1 || len(seen()) != 1 {
		t.Errorf("no member named: %+v, hits %v; want member 0 alone", s, seen())
	}
	if s := send("1"); s.Err == nil || s.Verdict.Retry || !strings.Contains(s.Err.Error(), "400") || seen()["bad"] != 1 {
		t.Errorf("member 1 refused: %+v, want a failure for good naming the status", s)
	}
	if s := send("2"); s.Err == nil || !s.Verdict.Retry || s.Verdict.Unreachable {
		t.Errorf("member 2 answered 503: %+v, want a retry, the member there", s)
	}
	if s := send("3"); s.Err == nil || !s.Verdict.Unreachable {
		t.Errorf("member 3 hung past its timeout: %+v, want it unreachable", s)
	}
	if s := send("4"); s.Outcome == nil || s.Outcome.State != model.StateFailed {
		t.Errorf("a member no longer configured: %+v, want a failure saying so", s)
	}
	time.Sleep(600 * time.Millisecond) // the hung member's handler is done
	mu.Lock()
	clear(hits)
	mu.Unlock()
	st := episodes{{ID: "ep1", Kind: model.KindStalledTurn, SessionID: "s1", Since: since}}
	n, err := o.Resend(context.Background(), st, now)
	if h := seen(); n != 1 || err == nil || h["ok"] != 1 || h["bad"] != 1 || h["down"] != 1 || h["hung"] != 1 {
		t.Errorf("resend: %d sent, %v, hits %v; want every member asked once, one took it", n, err, h)
	}
}

// episodes is a ledger that heard of these episodes.
type episodes []model.Episode

func (e episodes) EpisodesSentTo(context.Context, model.ActionKind, time.Time) ([]model.Episode, error) {
	return e, nil
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
