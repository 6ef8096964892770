package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/robfig/cron/v3"
	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/kandevtime"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// serveHTTP starts the listener: /metrics, probes, and (unless http.ui is
// false) the status page and API. http.web_config_file (exporter-toolkit's
// web config) adds TLS and basic auth to the whole listener, as on every
// Prometheus exporter.
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
	srv := &http.Server{Handler: d.routes(), ReadHeaderTimeout: 10 * time.Second}
	flags := &web.FlagConfig{WebListenAddresses: &[]string{listen}, WebConfigFile: &webCfg}
	logger := slog.New(slog.NewJSONHandler(d.opts.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	go func() {
		if err := web.Serve(ln, srv, flags, logger); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.log.Error("HTTP server", zap.Error(err))
		}
	}()
	return srv, nil
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
	mux.HandleFunc("/api/v1/findings", d.gated(ui, d.apiFindings))
	mux.HandleFunc("/{$}", d.gated(ui, d.page))
	d.debugRoutes(mux)
	return mux
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
	lastErr := d.status.lastErr
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
		problems = append(problems, "ledger unreachable: "+OneLine(err))
	}
	if d.lease != nil && !leader && !d.lease.SeenCurrent() {
		problems = append(problems, "standby sees no current lease")
	}
	if len(problems) > 0 && lastErr != "" {
		problems = append(problems, "last error: "+lastErr)
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
	_, _ = fmt.Fprintf(w, "ready (%s)\n", role)
}

// episodeView is one open episode for the page and the API.
type episodeView struct {
	ID          string      `json:"id"`
	Kind        string      `json:"kind"`
	SessionID   string      `json:"session_id"`
	TaskID      string      `json:"task_id"`
	TaskTitle   string      `json:"task_title"`
	WorkspaceID string      `json:"workspace_id"`
	TurnID      string      `json:"turn_id,omitempty"`
	PendingID   string      `json:"pending_id,omitempty"`
	Since       string      `json:"since"`
	AgeSeconds  int64       `json:"age_seconds"`
	Link        string      `json:"link"`
	Silenced    bool        `json:"silenced"`
	SilencedBy  string      `json:"silenced_by,omitempty"`
	LastAction  *actionView `json:"last_action"`
}

type actionView struct {
	Seq      string `json:"seq"`
	Action   string `json:"action"`
	State    string `json:"state"`
	At       string `json:"at"`
	Channel  string `json:"channel,omitempty"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error,omitempty"`
}

// episodes reads the open episodes, oldest first, with their last action
// and whether a silence covers them (two ledger queries, whatever the count).
func (d *daemon) episodes(ctx context.Context) ([]episodeView, error) {
	st := d.store.Load()
	if st == nil {
		return nil, fmt.Errorf("ledger not open")
	}
	state, err := st.Peek(ctx)
	if err != nil {
		return nil, err
	}
	cfg := d.cfg.Load()
	now := time.Now()
	silences, err := activeSilences(ctx, cfg, st, now)
	if err != nil {
		return nil, err
	}
	out := make([]episodeView, 0, len(state.Open))
	for _, e := range state.Open {
		f := storedFinding(e)
		v := episodeView{ID: e.ID, Kind: e.Kind, SessionID: e.SessionID, TaskID: e.TaskID, TaskTitle: e.TaskTitle,
			WorkspaceID: e.WorkspaceID, TurnID: e.TurnID, PendingID: e.PendingID, Since: kandevtime.RFC3339(e.Since),
			AgeSeconds: int64(now.Sub(e.Since) / time.Second), Link: f.Link}
		if v.Link == "" {
			v.Link = scan.TaskLink(cfg.Kandev.BaseURL, e.TaskID)
		}
		for _, s := range silences {
			if now.Before(s.Until) && policy.Matches(s.Match, e) {
				v.Silenced, v.SilencedBy = true, s.ID
				break
			}
		}
		if n := len(e.Actions); n > 0 {
			a := e.Actions[n-1]
			v.LastAction = &actionView{Seq: a.Seq, Action: a.Kind, State: a.State, At: kandevtime.RFC3339(a.UpdatedAt),
				Channel: a.Channel, Attempts: a.Attempts, Error: a.Error}
		}
		out = append(out, v)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].AgeSeconds > out[j].AgeSeconds })
	return out, nil
}

func (d *daemon) apiFindings(w http.ResponseWriter, r *http.Request) {
	eps, err := d.episodes(r.Context())
	if err != nil {
		http.Error(w, OneLine(err), http.StatusServiceUnavailable)
		return
	}
	d.status.mu.RLock()
	resp := struct {
		Report     *scan.Report  `json:"report"`
		Episodes   []episodeView `json:"episodes"`
		Leader     bool          `json:"leader"`
		LastScanAt string        `json:"last_successful_scan_at,omitempty"`
		LastError  string        `json:"last_error,omitempty"`
	}{d.status.report, eps, d.status.leader, "", d.status.lastErr}
	if !d.status.lastOK.IsZero() {
		resp.LastScanAt = kandevtime.RFC3339(d.status.lastOK)
	}
	d.status.mu.RUnlock()
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(resp)
}

// kindWords is notify's wording, for the page.
func kindWords(k string) string { return notify.KindWords(k) }
