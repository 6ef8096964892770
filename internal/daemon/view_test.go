package daemon

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/policy"
)

// TestNewView: the view of the open episodes, oldest first.
func TestNewView(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ep := func(id string, kind model.Kind, ws string, ago time.Duration, actions ...model.Action) model.Episode {
		return model.Episode{ID: id, Kind: kind, WorkspaceID: ws, TaskID: "task-" + id, Since: now.Add(-ago), Actions: actions}
	}
	silences := []policy.Silence{
		{ID: "s-web", Matchers: model.Matchers{model.Equal("workspace_id", "ws-web")}, Until: now.Add(time.Hour)},
		{ID: "s-old", Matchers: model.Matchers{model.Equal("workspace_id", "ws-ops")}, Until: now.Add(-time.Minute)}, // over
	}
	v := newView([]model.Episode{
		ep("young", "stalled_turn", "ws-web", time.Minute),
		ep("old", "unanswered_clarification", "ws-ops", time.Hour,
			model.Action{Seq: "0", Kind: "slack", State: "delivered"}, model.Action{Seq: "1", Kind: "slack", State: "pending", Attempts: 2}),
		ep("tie-a", "stalled_turn", "ws-x", 10*time.Minute),
		ep("tie-b", "stalled_turn", "ws-x", 10*time.Minute), // same age: the ledger's order stays
		ep("future", "stalled_turn", "ws-x", -time.Minute),  // a clock ahead: age 0, not negative
	}, silences, "http://kandev/", now)
	var ids []string
	for _, e := range v.episodes {
		ids = append(ids, e.ID)
	}
	if got, want := ids, []string{"old", "tie-a", "tie-b", "young", "future"}; !equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	byID := map[string]episodeView{}
	for _, e := range v.episodes {
		byID[e.ID] = e
	}
	if e := byID["young"]; !e.Silenced || e.SilencedBy != "s-web" || e.AgeSeconds != 60 || e.Link != "http://kandev/t/task-young" {
		t.Errorf("young: %+v (silenced by s-web, 60 s old, linked to its task)", e)
	}
	if e := byID["old"]; e.Silenced || e.LastAction == nil || e.LastAction.Seq != "1" || e.LastAction.Attempts != 2 {
		t.Errorf("old: %+v (an expired silence covers nothing; the last action is the latest)", e)
	}
	if e := byID["future"]; e.AgeSeconds != 0 {
		t.Errorf("an episode since the future is %d s old", e.AgeSeconds)
	}
	if len(v.kinds) != 2 || v.kinds[0] != (kindCount{"stalled_turn", 4}) || v.kinds[1] != (kindCount{"unanswered_clarification", 1}) {
		t.Errorf("kinds %v: the most first", v.kinds)
	}
	// A storm: the oldest viewRows kept, every one counted.
	v = newView(storm(viewRows+234, now), nil, "http://kandev", now)
	if len(v.episodes) != viewRows || v.total != viewRows+234 || v.episodes[0].ID != "0" || v.episodes[viewRows-1].ID != "999" {
		t.Errorf("storm: %d kept of %d, first %s", len(v.episodes), v.total, v.episodes[0].ID)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestAPIBody: the API lists the view's episodes and says how many more
// are open, and when the view was built.
func TestAPIBody(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	v := newView(storm(viewRows+5, now), nil, "http://kandev", now)
	v.leader, v.fail.err = true, "kandev unreachable"
	b, err := v.apiBody()
	if err != nil {
		t.Fatal(err)
	}
	var api struct {
		Episodes  []episodeView `json:"episodes"`
		Total     int           `json:"episodes_total"`
		NotListed int           `json:"episodes_not_listed"`
		AsOf      string        `json:"as_of"`
		Leader    bool          `json:"leader"`
		LastScan  *string       `json:"last_successful_scan_at"`
		LastError string        `json:"last_error"`
	}
	if err := json.Unmarshal(b, &api); err != nil {
		t.Fatal(err)
	}
	if len(api.Episodes) != viewRows || api.Total != viewRows+5 || api.NotListed != 5 || api.AsOf != "2026-12-01T12:00:00Z" ||
		!api.Leader || api.LastScan != nil || api.LastError != "kandev unreachable" {
		t.Errorf("API: %d episodes, total %d, not listed %d, as of %s, leader %v, last scan %v, error %q",
			len(api.Episodes), api.Total, api.NotListed, api.AsOf, api.Leader, api.LastScan, api.LastError)
	}
}

// TestRenderedOnce: however many requests come at once, a view's body is
// rendered once and every one gets it.
func TestRenderedOnce(t *testing.T) {
	var r rendered
	var calls atomic.Int32
	var wg sync.WaitGroup
	bodies := make([][]byte, 64)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bodies[i], _ = r.get(func() ([]byte, error) {
				calls.Add(1)
				time.Sleep(10 * time.Millisecond)
				return []byte("body"), nil
			})
		}()
	}
	wg.Wait()
	if calls.Load() != 1 {
		t.Errorf("rendered %d times", calls.Load())
	}
	for i, b := range bodies {
		if string(b) != "body" {
			t.Fatalf("request %d got %q", i, b)
		}
	}
}

// TestServeView: before the first cycle publishes a view, and while the
// last one could not read the ledger, the page and API answer 503 with
// Retry-After and why; then 200 with the view. A cycle that could not
// open the ledger at all publishes the last view's episodes again with
// the status as it now is.
func TestServeView(t *testing.T) {
	d := &daemon{reg: prometheus.NewRegistry()}
	d.cfg.Store(&config.Config{})
	h := d.handler()
	get := func(path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		return w
	}
	for _, path := range []string{"/", "/api/v1/findings"} {
		if w := get(path); w.Code != 503 || w.Header().Get("Retry-After") == "" {
			t.Errorf("%s before any view: %d, Retry-After %q", path, w.Code, w.Header().Get("Retry-After"))
		}
	}
	now := time.Now()
	d.publish(&view{at: now, err: "ledger unreachable: connection refused"})
	if w := get("/api/v1/findings"); w.Code != 503 || w.Body.String() != "ledger unreachable: connection refused\n" {
		t.Errorf("a view whose ledger read failed: %d %q", w.Code, w.Body.String())
	}
	d.publish(newView(storm(3, now), nil, "http://kandev", now))
	if w := get("/"); w.Code != 200 || w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("page: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	if w := get("/api/v1/findings"); w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("API: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	d.status.lastErr = "ledger not open"
	d.publish(nil)
	var api struct {
		Episodes  []json.RawMessage `json:"episodes"`
		LastError string            `json:"last_error"`
	}
	if w := get("/api/v1/findings"); json.Unmarshal(w.Body.Bytes(), &api) != nil || len(api.Episodes) != 3 || api.LastError != "ledger not open" {
		t.Errorf("republished view: %s", w.Body.String())
	}
}

// TestWriteWindow: every answer has 30 s to be written; a CPU profile or a
// trace that many more than it asks for.
func TestWriteWindow(t *testing.T) {
	for target, want := range map[string]time.Duration{
		"/metrics":                         30 * time.Second,
		"/api/v1/findings":                 30 * time.Second,
		"/debug/pprof/profile":             60 * time.Second, // its default is 30 s
		"/debug/pprof/profile?seconds=120": 150 * time.Second,
		"/debug/pprof/trace?seconds=0.5":   30*time.Second + 500*time.Millisecond,
		"/debug/pprof/trace?seconds=nope":  60 * time.Second,
		"/debug/pprof/profile?seconds=1e9": 60 * time.Second,  // absurd: the default window
		"/debug/pprof/heap?seconds=120":    150 * time.Second, // a delta profile
		"/debug/pprof/heap":                30 * time.Second,
		"/debug/pprof/profile?seconds=-5":  60 * time.Second,
	} {
		u, err := url.Parse(target)
		if err != nil {
			t.Fatal(err)
		}
		if got := writeWindow(u); got != want {
			t.Errorf("writeWindow(%s) = %s, want %s", target, got, want)
		}
	}
}
