package app

import (
	"net/http"
	// Importing it also registers its handlers on http.DefaultServeMux,
	// which watchdogd never serves: only the daemon's own mux below is.
	"net/http/pprof"
)

// debugRoutes mounts Go's profiles under /debug/pprof/, served only while
// http.pprof is on: what an engineer needs when a cycle turns slow or the
// heap grows, as Prometheus and Alertmanager offer. Off by default, since a
// CPU profile or trace costs the daemon while it runs; behind the same
// http.web_config_file (TLS, basic auth) as the rest of the listener.
// /debug/pprof/cmdline is not served: a command line may carry
// --database-url.
func (d *daemon) debugRoutes(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", d.profiling(pprof.Index)) // the index, and every named profile (heap, goroutine, …)
	mux.HandleFunc("/debug/pprof/profile", d.profiling(pprof.Profile))
	mux.HandleFunc("/debug/pprof/symbol", d.profiling(pprof.Symbol))
	mux.HandleFunc("/debug/pprof/trace", d.profiling(pprof.Trace))
	mux.HandleFunc("/debug/pprof/cmdline", http.NotFound)
}

func (d *daemon) profiling(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !d.cfg.Load().HTTP.PProf {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}
}
