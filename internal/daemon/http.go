package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/robfig/cron/v3"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/httpguard"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/term"
)

// serveHTTP starts the listener: /metrics, probes, and (unless http.ui is
// false) the status page and API. http.web_config_file (exporter-toolkit's
// web config) adds TLS and basic auth to the whole listener, as on every
// Prometheus exporter. The listener bounds its connections (httpguard.Guard)
// and every request its time: a client that is slow to send or to read,
// or many that stay connected, cost the daemon no more than the bounds.
// On loopback it answers only to loopback's names (httpguard.OnlyLoopbackHosts).
func (d *daemon) serveHTTP(cfg *config.Config) (*http.Server, error) {
	listen, webCfg := cfg.HTTP.Listen, cfg.HTTP.WebConfigFile
	if webCfg != "" {
		if err := web.Validate(webCfg); err != nil {
			return nil, fmt.Errorf("http.web_config_file: %w", err)
		}
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("http.listen %s: %w", listen, err)
	}
	guard := httpguard.New(ln, httpguard.MaxConns, httpguard.MaxIdleConns, httpguard.MaxSilentConns)
	// One logger: exporter-toolkit logs through slog and net/http through
	// the standard library's log, both bridged into the daemon's zap, so
	// that every line obeys log.level and log.format (a TLS handshake a
	// client botched is a warning, not a raw line).
	srv := &http.Server{Handler: httpguard.OnlyLoopbackHosts(listen, d.handler()), ConnState: guard.Track,
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 90 * time.Second,
		MaxHeaderBytes: 32 << 10}
	if srv.ErrorLog, err = zap.NewStdLogAt(d.log, zap.WarnLevel); err != nil {
		_ = ln.Close()
		return nil, err
	}
	flags := &web.FlagConfig{WebListenAddresses: &[]string{listen}, WebConfigFile: &webCfg}
	logger := slog.New(zapslog.NewHandler(d.log.Core()))
	go func() {
		if err := web.Serve(guard, srv, flags, logger); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.log.Error("HTTP server", zap.Error(err))
		}
	}()
	return srv, nil
}

// handler is the listener's handler: the routes, each request given its
// write deadline.
func (d *daemon) handler() http.Handler {
	mux := d.routes()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(writeWindow(r.URL)))
		mux.ServeHTTP(w, r)
	})
}

// writeWindow is how long a request may take to be answered: long enough
// for the largest status page or API answer to a slow client, and for a
// profile of the seconds it asks for (a CPU profile, a trace, or a delta
// of any other; a server-wide WriteTimeout would refuse those longer than
// it). A client that reads slower than that is cut off rather than
// holding its connection.
func writeWindow(u *url.URL) time.Duration {
	const window = 30 * time.Second
	if !strings.HasPrefix(u.Path, "/debug/pprof/") {
		return window
	}
	if s, err := strconv.ParseFloat(u.Query().Get("seconds"), 64); err == nil && s > 0 && s < 3600 {
		return window + time.Duration(s*float64(time.Second))
	}
	switch u.Path {
	case "/debug/pprof/profile", "/debug/pprof/trace":
		return 2 * window // their default durations: 30 s and 1 s
	}
	return window
}

// routes is what the listener serves. The gated routes look at the config
// on every request, so a reload turns them on or off.
func (d *daemon) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(d.reg, promhttp.HandlerOpts{Registry: d.reg}))
	live := func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) }
	mux.HandleFunc("/livez", live)
	mux.HandleFunc("/healthz", live)
	mux.HandleFunc("/readyz", d.readyz)
	mux.HandleFunc("POST /-/reload", d.reloadHTTP)
	mux.HandleFunc("PUT /-/reload", d.reloadHTTP)
	ui := (*config.Config).UIEnabled // the page and API show task titles and questions
	mux.HandleFunc("/api/v1/findings", d.gated(ui, d.serveView("application/json", (*view).apiJSON)))
	mux.HandleFunc("GET /api/v1/report", d.gated(ui, d.serveReport))
	mux.HandleFunc("/{$}", d.gated(ui, d.serveView("text/html; charset=utf-8", (*view).pageHTML)))
	d.debugRoutes(mux)
	return mux
}

// serveView answers from the view the last cycle published, rendered once
// for all requests; 503 until there is one, or while its ledger read failed.
func (d *daemon) serveView(contentType string, body func(*view) ([]byte, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v := d.view.Load()
		if v == nil || v.err != "" {
			msg := "no status yet: it is built after each cycle, and the first has not finished"
			if v != nil {
				msg = v.err
			}
			w.Header().Set("Retry-After", "10")
			http.Error(w, msg, http.StatusServiceUnavailable)
			return
		}
		b, err := body(v)
		if err != nil {
			http.Error(w, term.OneLine(err), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = w.Write(b)
	}
}

// gated serves h only while on holds for the config in effect, else 404.
func (d *daemon) gated(on func(*config.Config) bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !on(d.cfg.Load()) {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}
}

// readiness says whether this replica is doing its job: config loaded, a
// recent successful scan (see staleAt; and not two failures in a row),
// the ledger reachable, and on a standby a current lease held by someone.
func (d *daemon) readiness(ctx context.Context) []string {
	var problems []string
	d.status.mu.RLock()
	lastOK, failures, sched, leader := d.status.lastOK, d.status.failures, d.status.sched, d.status.leader
	fail := d.status.failing()
	d.status.mu.RUnlock()
	switch {
	case lastOK.IsZero():
		problems = append(problems, "no successful scan yet")
	case time.Now().After(staleAt(sched, lastOK)):
		problems = append(problems, fmt.Sprintf("last successful scan %s ago", time.Since(lastOK).Round(time.Second)))
	case failures >= 2:
		problems = append(problems, fmt.Sprintf("%d cycles failed in a row", failures))
	}
	st := d.store.Load()
	if st == nil {
		problems = append(problems, "ledger not open")
	} else if err := st.Ping(ctx); err != nil {
		problems = append(problems, "ledger unreachable: "+term.OneLine(err))
	}
	if d.lease != nil && !leader && !d.lease.SeenCurrent() {
		problems = append(problems, "standby sees no current lease")
	}
	if len(problems) > 0 && fail.err != "" && !fail.on() {
		problems = append(problems, "last error: "+fail.err)
	}
	if len(problems) > 0 && fail.on() {
		problems = append(problems, fail.words())
	}
	return problems
}

// staleAt is when a scan that succeeded at lastOK is too old: once three
// scheduled cycles after it have come due. Counting the schedule's own
// ticks, not three times one gap between them, keeps a schedule with
// uneven gaps ("*/5 9-17 * * 1-5", business hours) ready through the
// night, when no cycle is due. A cycle that came due runs on the cron
// timer at once; the next tick is its grace to finish.
func staleAt(sched cron.Schedule, lastOK time.Time) time.Time {
	if sched == nil {
		return lastOK.Add(3 * time.Minute) // the default @every 1m
	}
	t := lastOK
	for range 3 {
		t = sched.Next(t)
	}
	return t
}

func (d *daemon) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	if problems := d.readiness(ctx); len(problems) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintf(w, "not ready: %s\n", strings.Join(problems, "; "))
		return
	}
	role := "leader"
	if d.lease != nil && !d.lease.Held() {
		role = "standby"
	}
	// One failed cycle leaves a replica ready (a blip must not move
	// traffic or the lease), but the answer says so.
	d.status.mu.RLock()
	fail := d.status.failing()
	d.status.mu.RUnlock()
	note := ""
	if fail.on() {
		note = "; " + fail.words()
	}
	_, _ = fmt.Fprintf(w, "ready (%s)%s\n", role, note)
}

// kindWords is a kind in the words Slack messages use, for the page.
func kindWords(k model.Kind) string { return model.KindWords(k) }
