package daemon

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/watchdogd/watchdogd/internal/config"
)

// TestRoutesFollowConfig: what the listener serves follows the config at
// each request, so a reload turns the gated routes on or off. The status
// page and API (task titles, questions) only with http.ui on; Go's
// profiles only with http.pprof on; the command line (it may carry
// --database-url) never. Without a ledger the page answers 503, which
// tells "served" from "gated" (404).
func TestRoutesFollowConfig(t *testing.T) {
	d := &daemon{reg: prometheus.NewRegistry()}
	mux := d.routes()
	get := func(path string) int {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		return w.Code
	}
	no, yes := false, true
	cases := []struct {
		name  string
		ui    *bool
		pprof bool
		want  map[string]int
	}{
		{"defaults: page and API on, profiles off", nil, false, map[string]int{
			"/metrics": 200, "/livez": 200, "/": 503, "/api/v1/findings": 503, "/api/v1/report": 503,
			"/debug/pprof/": 404, "/debug/pprof/heap": 404, "/debug/pprof/cmdline": 404,
		}},
		{"http.ui false: metrics and probes only", &no, false, map[string]int{
			"/metrics": 200, "/healthz": 200, "/": 404, "/api/v1/findings": 404, "/api/v1/report?since=1d": 404,
		}},
		{"http.pprof true: the index and the profiles, not the command line", &yes, true, map[string]int{
			"/debug/pprof/": 200, "/debug/pprof/heap": 200, "/debug/pprof/goroutine?debug=1": 200,
			"/debug/pprof/symbol": 200, "/debug/pprof/cmdline": 404, "/debug/pprof/nosuch": 404, "/": 503,
		}},
		{"and off again after a reload", &yes, false, map[string]int{"/debug/pprof/": 404, "/debug/pprof/heap": 404}},
	}
	for _, c := range cases {
		cfg := config.Default()
		cfg.HTTP.UI, cfg.HTTP.PProf = c.ui, c.pprof
		d.cfg.Store(cfg)
		for path, want := range c.want {
			if got := get(path); got != want {
				t.Errorf("%s: GET %s = %d, want %d", c.name, path, got, want)
			}
		}
	}
}
