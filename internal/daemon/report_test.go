package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
)

// openStalls opens n stalled turns, opened now.
func openStalls(t *testing.T, st *ledger.Store, prefix string, n int) {
	t.Helper()
	now := time.Now()
	var es []model.Episode
	for i := range n {
		id := fmt.Sprintf("%s%d", prefix, i)
		es = append(es, model.Episode{ID: id, Identity: "stalled_turn|" + id + "||", Kind: model.KindStalledTurn, SessionID: id, TaskID: "t", WorkspaceID: "ws",
			TaskTitle: "Fix", Since: now.Add(-20 * time.Minute), OpenedAt: now.Add(-time.Second), LastSeen: now, Finding: "{}"})
	}
	if _, _, err := st.Decide(context.Background(), func(model.Ledger) (model.Plan, error) { return model.Plan{Now: now, Open: es}, nil }); err != nil {
		t.Fatal(err)
	}
}

// TestServeReport: GET /api/v1/report answers the report of the window
// since asks for (7d when it asks none), refuses one it cannot read or
// longer than the ledger keeps, answers the precomputed windows from the
// cache the last cycle left (24h, 7d and 30d, those within the
// retention) and computes any other when asked, one at a time: a second
// waits for the first, and is answered 503 if it cannot.
func TestServeReport(t *testing.T) {
	ctx := context.Background()
	st, err := ledger.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	d := &daemon{reg: prometheus.NewRegistry(), reportSlot: make(chan struct{}, 1), log: zap.NewNop(), work: ctx}
	d.store.Store(st)
	cfg := config.Default()
	d.cfg.Store(cfg)
	h := d.handler()
	get := func(target string, timeout time.Duration) *httptest.ResponseRecorder {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil).WithContext(rctx))
		return w
	}
	opened := func(w *httptest.ResponseRecorder) (int, string) {
		var r struct {
			Window struct{ Seconds int64 }
			Kinds  []struct {
				Kind   string
				Opened int
			}
		}
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &r) != nil || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%d %s: %s", w.Code, w.Header().Get("Content-Type"), w.Body.String())
		}
		for _, k := range r.Kinds {
			if k.Kind == "stalled_turn" {
				return k.Opened, fmt.Sprint(r.Window.Seconds)
			}
		}
		return -1, ""
	}
	openStalls(t, st, "a", 2)
	// Before any cycle computed the cache: computed when asked.
	if n, secs := opened(get("/api/v1/report", time.Minute)); n != 2 || secs != "604800" {
		t.Errorf("7d by default: %d opened over %s s", n, secs)
	}
	for target, want := range map[string]string{
		"/api/v1/report?since=soon": `since "soon": want a duration like 24h, 7d or 2w`,
		"/api/v1/report?since=-1d":  `since "-1d": want a duration like 24h, 7d or 2w`,
		"/api/v1/report?since=60d":  "since 60d: the ledger keeps 30d (state.retention)",
	} {
		if w := get(target, time.Minute); w.Code != 400 || strings.TrimSpace(w.Body.String()) != want {
			t.Errorf("%s: %d %q, want 400 %q", target, w.Code, w.Body.String(), want)
		}
	}
	d.precomputeReports(cfg)
	openStalls(t, st, "b", 3)
	// 1d is the cached 24h, as the cycle left it; 2d is computed now.
	for target, want := range map[string]int{"/api/v1/report?since=1d": 2, "/api/v1/report?since=30d": 2, "/api/v1/report?since=2d": 5} {
		if n, _ := opened(get(target, time.Minute)); n != want {
			t.Errorf("%s: %d opened, want %d", target, n, want)
		}
	}
	// One being computed: a second cannot be, and says so once it has
	// waited what its request allows.
	d.reportSlot <- struct{}{}
	if w := get("/api/v1/report?since=2d", 50*time.Millisecond); w.Code != 503 || w.Header().Get("Retry-After") == "" {
		t.Errorf("while another is computed: %d %q", w.Code, w.Body.String())
	}
	if n, _ := opened(get("/api/v1/report?since=7d", 50*time.Millisecond)); n != 2 {
		t.Errorf("a cached window while another is computed: %d opened", n)
	}
	<-d.reportSlot
	// A ledger that keeps a day: only 24h is computed, and no more asked.
	short := config.Default()
	short.State.Retention = 24 * time.Hour
	d.cfg.Store(short)
	d.precomputeReports(short)
	if c := d.reports.Load(); c == nil || len(c.json) != 1 || c.json[24*time.Hour] == nil {
		t.Errorf("cache with a day's retention: %+v", c)
	}
	if w := get("/api/v1/report?since=7d", time.Minute); w.Code != 400 {
		t.Errorf("7d of a day's ledger: %d", w.Code)
	}
}
