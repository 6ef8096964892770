package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/cycle"
	"github.com/watchdogd/watchdogd/internal/kandevtime"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
)

// viewRows bounds the open episodes a view keeps, the oldest: the API
// lists them, the page the first pageRows. A storm of thousands would
// otherwise cost every cycle's view, and every answer, megabytes.
const viewRows = 1000

// view is what the status page and the API show: built once per cycle,
// after it settled, from one read of the ledger. Requests read no ledger
// and a burst of them costs no more than one: the page and the API are
// each rendered once per view, at the first request, and every request
// gets the same bytes. Nothing in a published view changes.
type view struct {
	at  time.Time // when it was built; ages are as of then
	err string    // the ledger could not be read: the page and API answer 503 with it
	// episodes are the oldest open episodes, at most viewRows; total
	// counts them all, kinds by kind.
	episodes []episodeView
	total    int
	kinds    []kindCount
	// closed are the destinations held closed (a webhook gone).
	closed []closedView

	// The daemon's status when the view was published.
	report *scan.Report
	leader bool
	lastOK time.Time
	fail   failing

	page, api rendered
}

// episodeView is one open episode for the page and the API.
type episodeView struct {
	ID          string      `json:"id"`
	Kind        model.Kind  `json:"kind"`
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
	Seq      string           `json:"seq"`
	Action   model.ActionKind `json:"action"`
	State    model.State      `json:"state"`
	At       string           `json:"at"`
	Channel  string           `json:"channel,omitempty"`
	Attempts int              `json:"attempts"`
	Error    string           `json:"error,omitempty"`
}

// closedView is a destination held, closed for good or by its lane's
// breaker, as the page and the API show it: by name (a webhook's), never
// its URL.
type closedView struct {
	// State is "closed" (gone for good: a webhook's 410) or "down" (its
	// lane's breaker holds it until a probe answers).
	State  string `json:"state"`
	Outlet string `json:"outlet"`
	Name   string `json:"name"`
	Since  string `json:"since"`
	Why    string `json:"why"`
}

// closedOf lists holds for the page and the API.
func closedOf(holds []model.Hold) []closedView {
	out := make([]closedView, 0, len(holds))
	for _, h := range holds {
		state := "down"
		if h.Gone() {
			state = "closed"
		}
		out = append(out, closedView{State: state, Outlet: h.Outlet, Name: notify.DestinationName(h.Destination), Since: kandevtime.RFC3339(h.Since), Why: notify.HoldWords(h)})
	}
	return out
}

// rendered is a view's body for one route, rendered once.
type rendered struct {
	once sync.Once
	body []byte
	err  error
}

func (r *rendered) get(render func() ([]byte, error)) ([]byte, error) {
	r.once.Do(func() { r.body, r.err = render() })
	return r.body, r.err
}

// viewTimeout bounds the read of the ledger for the status page and API.
const viewTimeout = 10 * time.Second

// nextView reads the view a cycle leaves, with its own deadline (the
// cycle's may be spent). While http.ui is off there is none, and none is
// kept: turning it on by a reload shows the next cycle's.
func (d *daemon) nextView(cfg *config.Config) *view {
	if !cfg.UIEnabled() {
		d.view.Store(nil)
		return nil
	}
	ctx, cancel := context.WithTimeout(d.work, viewTimeout)
	defer cancel()
	return d.readView(ctx, cfg)
}

// planned publishes a view of a cycle's saved plan, before its deliveries,
// while the daemon has published none: the first cycle's deliveries may
// take long (a busy channel), and until they end the page and the API
// would show nothing while /readyz already says ready. Later cycles show
// the view the one before left until they end.
func (d *daemon) planned() {
	if d.view.Load() != nil {
		return
	}
	v := d.nextView(d.cfg.Load())
	if v == nil {
		return
	}
	d.status.mu.Lock()
	d.publish(v)
	d.status.mu.Unlock()
}

// readView reads the ledger for the next view; a read that fails gives a
// view that says so.
func (d *daemon) readView(ctx context.Context, cfg *config.Config) *view {
	now := time.Now()
	st := d.store.Load()
	if st == nil {
		return &view{at: now, err: "ledger not open"}
	}
	state, err := st.Peek(ctx)
	if err != nil {
		return &view{at: now, err: term.OneLine(err)}
	}
	silences, err := cycle.ActiveSilences(ctx, cfg, st, now)
	if err != nil {
		return &view{at: now, err: term.OneLine(err)}
	}
	holds, err := st.Holds(ctx, time.Time{}) // a breaker past its backoff is down until its probe answers
	if err != nil {
		return &view{at: now, err: term.OneLine(err)}
	}
	v := newView(state.Open, silences, cfg.Kandev.BaseURL, now)
	v.closed = closedOf(holds)
	return v
}

// newView is the view of the open episodes: oldest first (the longest
// open first, ties in the ledger's order), each with its last action and
// the silence that covers it, if any; the first viewRows kept, the rest
// counted.
func newView(open []model.Episode, silences []policy.Silence, baseURL string, now time.Time) *view {
	v := &view{at: now, total: len(open)}
	order := slices.Clone(open)
	slices.SortStableFunc(order, func(a, b model.Episode) int { return a.Since.Compare(b.Since) })
	counts := map[model.Kind]int{}
	for _, e := range order {
		counts[e.Kind]++
	}
	for k, n := range counts {
		v.kinds = append(v.kinds, kindCount{Kind: k, N: n})
	}
	slices.SortFunc(v.kinds, func(a, b kindCount) int {
		if a.N != b.N {
			return b.N - a.N // the most first
		}
		return strings.Compare(string(a.Kind), string(b.Kind))
	})
	order = order[:min(len(order), viewRows)]
	v.episodes = make([]episodeView, 0, len(order))
	for _, e := range order {
		v.episodes = append(v.episodes, episodeOf(e, silences, baseURL, now))
	}
	return v
}

// episodeOf is one open episode as the page and the API show it.
func episodeOf(e model.Episode, silences []policy.Silence, baseURL string, now time.Time) episodeView {
	f := policy.StoredFinding(e)
	v := episodeView{ID: e.ID, Kind: e.Kind, SessionID: e.SessionID, TaskID: e.TaskID, TaskTitle: e.TaskTitle,
		WorkspaceID: e.WorkspaceID, TurnID: e.TurnID, PendingID: e.PendingID, Since: kandevtime.RFC3339(e.Since),
		AgeSeconds: max(0, int64(now.Sub(e.Since)/time.Second)), Link: f.Link}
	if v.Link == "" {
		v.Link = scan.TaskLink(baseURL, e.TaskID)
	}
	for _, s := range silences {
		if s.Holds(e, now) {
			v.Silenced, v.SilencedBy = true, s.ID
			break
		}
	}
	if n := len(e.Actions); n > 0 {
		a := e.Actions[n-1]
		v.LastAction = &actionView{Seq: a.Seq, Action: a.Kind, State: a.State, At: kandevtime.RFC3339(a.UpdatedAt),
			Channel: a.Channel, Attempts: a.Attempts, Error: a.Error}
	}
	return v
}

// publish makes v (nil: the last view's episodes again) what the page and
// the API show, with the status as it now is; with d.status.mu held, so
// that a replica that reads ready also shows what its cycle found.
func (d *daemon) publish(v *view) {
	if v == nil {
		old := d.view.Load()
		if old == nil {
			return
		}
		v = &view{at: old.at, err: old.err, episodes: old.episodes, total: old.total, kinds: old.kinds, closed: old.closed}
	}
	s := &d.status
	v.report, v.leader, v.lastOK, v.fail = s.report, s.leader, s.lastOK, s.failing()
	d.view.Store(v)
}

// apiJSON is the API's answer, rendered once.
func (v *view) apiJSON() ([]byte, error) { return v.api.get(v.apiBody) }

// pageHTML is the status page, rendered once.
func (v *view) pageHTML() ([]byte, error) { return v.page.get(v.pageBody) }

// apiBody is /api/v1/findings: the latest report, the view's episodes, and
// how many more are open than it lists.
func (v *view) apiBody() ([]byte, error) {
	resp := struct {
		Report            *scan.Report  `json:"report"`
		Episodes          []episodeView `json:"episodes"`
		EpisodesTotal     int           `json:"episodes_total"`
		EpisodesNotListed int           `json:"episodes_not_listed"`
		AsOf              string        `json:"as_of"`
		Leader            bool          `json:"leader"`
		LastScanAt        string        `json:"last_successful_scan_at,omitempty"`
		LastError         string        `json:"last_error,omitempty"`
		// ScanFailing says kandev's database is not being read: the
		// report and episodes are as of last_successful_scan_at.
		ScanFailing bool `json:"scan_failing"`
		// FailingSince is when the cycles that fail in a row began to.
		FailingSince string `json:"failing_since,omitempty"`
		// Closed are the destinations nothing is sent to (a webhook gone).
		Closed []closedView `json:"closed_destinations"`
	}{v.report, v.episodes, v.total, v.total - len(v.episodes), kandevtime.RFC3339(v.at), v.leader, "", v.fail.err,
		v.fail.on() && v.fail.scan, v.fail.sinceRFC3339(), v.closed}
	if !v.lastOK.IsZero() {
		resp.LastScanAt = kandevtime.RFC3339(v.lastOK)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(resp); err != nil {
		return nil, fmt.Errorf("encode the findings: %w", err)
	}
	return b.Bytes(), nil
}

// pageBody is the status page.
func (v *view) pageBody() ([]byte, error) {
	data := pageData{Episodes: v.episodes[:min(len(v.episodes), pageRows)], Total: v.total, Listed: len(v.episodes),
		Kinds: v.kinds, LastScan: "never", LastError: v.fail.err, Failing: v.fail.words(), ScanFailing: v.fail.on() && v.fail.scan,
		Role: "leader", Closed: v.closed}
	if v.report != nil {
		data.Sessions = len(v.report.Sessions)
	}
	if !v.lastOK.IsZero() {
		data.LastScan = kandevtime.RFC3339(v.lastOK)
	}
	if !v.leader {
		data.Role = "standby"
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("render the status page: %w", err)
	}
	return b.Bytes(), nil
}
