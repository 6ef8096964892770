package daemon

import (
	"net/http"
	// Importing it also registers its handlers on http.DefaultServeMux,
	// which watchdogd never serves: only the daemon's own mux below is.
	"net/http/pprof"

	"github.com/watchdogd/watchdogd/internal/config"
)

// debugRoutes mounts Go's profiles under /debug/pprof/, served only while
// http.pprof is on: what an engineer needs when a cycle turns slow or the
// heap grows, as Prometheus and Alertmanager offer. Off by default, since a
// CPU profile or trace costs the daemon while it runs; behind the same
// http.web_config_file (TLS, basic auth) as the rest of the listener.
// /debug/pprof/cmdline is not served: a command line may carry
// --database-url.
func (d *daemon) debugRoutes(mux *http.ServeMux) {
	on := func(c *config.Config) bool { return c.HTTP.PProf }
	mux.HandleFunc("/debug/pprof/", d.gated(on, pprof.Index)) // the index, and every named profile (heap, goroutine, …)
	mux.HandleFunc("/debug/pprof/profile", d.gated(on, pprof.Profile))
	mux.HandleFunc("/debug/pprof/symbol", d.gated(on, pprof.Symbol))
	mux.HandleFunc("/debug/pprof/trace", d.gated(on, pprof.Trace))
	mux.HandleFunc("/debug/pprof/cmdline", http.NotFound)
}
