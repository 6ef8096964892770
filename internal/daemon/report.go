package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	promodel "github.com/prometheus/common/model"
	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/report"
	"github.com/watchdogd/watchdogd/internal/term"
)

// reportWindows are the windows GET /api/v1/report answers from a cache,
// computed once per cycle from one read of the ledger (those within
// state.retention); any other is computed when asked, one at a time.
var reportWindows = []time.Duration{24 * time.Hour, 7 * 24 * time.Hour, 30 * 24 * time.Hour}

// reportWait bounds how long an asked-for report waits for the one being
// computed before it is answered 503.
const reportWait = 10 * time.Second

// reportCache is the reports of reportWindows as JSON, as of at.
type reportCache struct {
	at   time.Time
	json map[time.Duration][]byte
}

// precomputeReports fills the cache after a cycle: one read of the
// largest window within the retention, each window computed from it. A
// read that fails empties the cache (asked-for reports then read the
// ledger themselves, and say what failed) and is logged once.
func (d *daemon) precomputeReports(cfg *config.Config) {
	st := d.store.Load()
	if !cfg.UIEnabled() || st == nil {
		d.reports.Store(nil)
		return
	}
	ctx, cancel := context.WithTimeout(d.work, viewTimeout)
	defer cancel()
	now := time.Now()
	var widest time.Duration
	for _, w := range reportWindows {
		if w <= cfg.State.Retention {
			widest = w
		}
	}
	if widest == 0 {
		d.reports.Store(nil)
		return
	}
	eps, truncated, err := st.ReportEpisodes(ctx, now.Add(-widest), now, ledger.ReportLimit)
	if err != nil {
		d.reports.Store(nil)
		if msg := term.OneLine(err); msg != d.reportErr {
			d.log.Warn("reports not computed; GET /api/v1/report reads the ledger when asked", zap.String("err", msg))
			d.reportErr = msg
		}
		return
	}
	d.reportErr = ""
	c := &reportCache{at: now, json: map[time.Duration][]byte{}}
	for _, w := range reportWindows {
		if w > widest {
			continue
		}
		b, err := json.Marshal(windowReport(eps, truncated, now.Add(-w), now, now, cfg.State.Retention))
		if err == nil {
			c.json[w] = b
		}
	}
	d.reports.Store(c)
}

// windowReport is the report of [from, until) from eps, a read of a
// window at least as wide ending at until: the episodes this window
// touches, cut (truncated) only if the read's cut falls inside it.
func windowReport(eps []report.Episode, truncated bool, from, until, now time.Time, retention time.Duration) report.Report {
	var in []report.Episode
	cut := until
	for _, e := range eps {
		if e.Opened.Before(cut) {
			cut = e.Opened
		}
		if e.Opened.Before(until) && (e.Resolved.IsZero() || !e.Resolved.Before(from)) {
			in = append(in, e)
		}
	}
	return report.Compute(report.Input{Episodes: in, From: from, Until: until, Now: now, Retention: retention,
		Truncated: truncated && cut.After(from)})
}

// serveReport is GET /api/v1/report?since=7d: the report of the window
// that long before now, as `watchdogd report -o json` prints it; from the
// cache for reportWindows, else computed now, one at a time. A window
// longer than state.retention is refused: the ledger holds no more.
func (d *daemon) serveReport(w http.ResponseWriter, r *http.Request) {
	cfg := d.cfg.Load()
	since := r.URL.Query().Get("since")
	if since == "" {
		since = "7d"
	}
	pd, err := promodel.ParseDuration(since)
	window := time.Duration(pd)
	switch {
	case err != nil || window <= 0:
		http.Error(w, fmt.Sprintf("since %q: want a duration like 24h, 7d or 2w", term.Escape(since)), http.StatusBadRequest)
		return
	case window > cfg.State.Retention:
		http.Error(w, fmt.Sprintf("since %s: the ledger keeps %s (state.retention)", since, promodel.Duration(cfg.State.Retention)), http.StatusBadRequest)
		return
	}
	if c := d.reports.Load(); c != nil {
		if b, ok := c.json[window]; ok {
			writeJSON(w, b)
			return
		}
	}
	b, status, err := d.reportNow(r.Context(), cfg, window)
	if err != nil {
		if status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "10")
		}
		http.Error(w, term.OneLine(err), status)
		return
	}
	writeJSON(w, b)
}

// reportNow computes one report while no other is being computed.
func (d *daemon) reportNow(ctx context.Context, cfg *config.Config, window time.Duration) ([]byte, int, error) {
	st := d.store.Load()
	if st == nil {
		return nil, http.StatusServiceUnavailable, fmt.Errorf("ledger not open")
	}
	wait, cancel := context.WithTimeout(ctx, reportWait)
	defer cancel()
	select {
	case d.reportSlot <- struct{}{}:
		defer func() { <-d.reportSlot }()
	case <-wait.Done():
		return nil, http.StatusServiceUnavailable, fmt.Errorf("another report is being computed; ask again in a moment")
	}
	rctx, rcancel := context.WithTimeout(ctx, viewTimeout)
	defer rcancel()
	now := time.Now()
	eps, truncated, err := st.ReportEpisodes(rctx, now.Add(-window), now, ledger.ReportLimit)
	if err != nil {
		return nil, http.StatusServiceUnavailable, err
	}
	b, err := json.Marshal(report.Compute(report.Input{Episodes: eps, From: now.Add(-window), Until: now, Now: now,
		Retention: cfg.State.Retention, Truncated: truncated}))
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	return b, http.StatusOK, nil
}

func writeJSON(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}
