package metrics

import (
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// OtherWorkspaces labels the workspaces past metrics.max_workspaces (and
// a finding with no workspace id).
const OtherWorkspaces = "other"

// WorkspaceIdle is how long a workspace labelled in the per-workspace
// series keeps them without a finding: then they go, and its place with
// them.
const WorkspaceIdle = 24 * time.Hour

// PerWorkspace is what the per-workspace series are asked to be
// (metrics.by_workspace, metrics.max_workspaces).
type PerWorkspace struct {
	On  bool
	Max int
}

// Workspaces are the opt-in per-workspace series, under names of their
// own so that no other series' labels change with the config: findings and
// the oldest finding's age by workspace and kind. At most Max workspaces
// are labelled, in the order first seen; the findings of the others count
// under workspace_id="other". A workspace with no finding for
// WorkspaceIdle loses its series and its place, which the next workspace
// in the order takes.
type Workspaces struct {
	Findings *prometheus.GaugeVec
	Oldest   *prometheus.GaugeVec

	mu   sync.Mutex
	want PerWorkspace
	// order is every workspace with a finding in the last WorkspaceIdle,
	// first seen first; last is when each last had one.
	order    []string
	last     map[string]time.Time
	labelled map[string]bool
}

func newWorkspaces(reg prometheus.Registerer, ns string) *Workspaces {
	w := &Workspaces{
		Findings: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "findings_by_workspace",
			Help: "Findings in the last successful scan, by workspace and kind (metrics.by_workspace; at most metrics.max_workspaces workspaces, first seen first, the rest as workspace_id=\"other\"; a workspace without a finding for 24 h loses its series)."},
			[]string{"workspace_id", "kind"}),
		Oldest: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "oldest_finding_age_by_workspace_seconds",
			Help: "Age of the oldest finding of each kind in the last successful scan, by workspace (0 when none; labelled as watchdogd_findings_by_workspace)."},
			[]string{"workspace_id", "kind"}),
		last: map[string]time.Time{}, labelled: map[string]bool{},
	}
	reg.MustRegister(w.Findings, w.Oldest)
	return w
}

// Observe sets the series from a scan's findings at now, as want asks
// (the config in effect: a change of it starts them afresh).
func (w *Workspaces) Observe(findings []scan.Finding, want PerWorkspace, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if want != w.want {
		w.reset()
		w.want = want
	}
	if !want.On {
		return
	}
	for _, f := range findings {
		id := workspaceOf(f)
		if _, ok := w.last[id]; !ok {
			w.order = append(w.order, id)
		}
		w.last[id] = now
	}
	w.expire(now)
	counts, oldest := map[string]map[model.Kind]int{}, map[string]map[model.Kind]int64{}
	for _, f := range findings {
		id := workspaceOf(f)
		if !w.labelled[id] {
			id = OtherWorkspaces
		}
		if counts[id] == nil {
			counts[id], oldest[id] = map[model.Kind]int{}, map[model.Kind]int64{}
		}
		counts[id][f.Kind]++
		oldest[id][f.Kind] = max(oldest[id][f.Kind], f.AgeSeconds)
	}
	for id := range w.labelled {
		w.set(id, counts[id], oldest[id])
	}
	w.set(OtherWorkspaces, counts[OtherWorkspaces], oldest[OtherWorkspaces])
}

// expire drops the workspaces idle for WorkspaceIdle, with their series,
// and labels the first Max of the rest in the order first seen: a
// workspace labelled stays labelled while it has findings (those before
// it only leave), and one counted as other takes the first place that
// frees.
func (w *Workspaces) expire(now time.Time) {
	kept := w.order[:0]
	for _, id := range w.order {
		if now.Sub(w.last[id]) < WorkspaceIdle {
			kept = append(kept, id)
			continue
		}
		delete(w.last, id)
		if w.labelled[id] {
			w.drop(id)
		}
	}
	w.order = kept
	n := 0
	for _, id := range w.order {
		if id == OtherWorkspaces {
			continue
		}
		if n == w.want.Max {
			break
		}
		w.labelled[id] = true
		n++
	}
}

// set writes one workspace's series, every kind (zero when absent).
func (w *Workspaces) set(id string, counts map[model.Kind]int, oldest map[model.Kind]int64) {
	for _, k := range model.Kinds {
		w.Findings.WithLabelValues(id, string(k)).Set(float64(counts[k]))
		w.Oldest.WithLabelValues(id, string(k)).Set(float64(oldest[k]))
	}
}

// drop removes one workspace's series.
func (w *Workspaces) drop(id string) {
	delete(w.labelled, id)
	for _, k := range model.Kinds {
		w.Findings.DeleteLabelValues(id, string(k))
		w.Oldest.DeleteLabelValues(id, string(k))
	}
}

// reset removes every series and forgets every workspace.
func (w *Workspaces) reset() {
	w.Findings.Reset()
	w.Oldest.Reset()
	w.order, w.last, w.labelled = nil, map[string]time.Time{}, map[string]bool{}
}

// maxWorkspaceID bounds a workspace id as a label value.
const maxWorkspaceID = 128

// workspaceOf is the label a finding's workspace is counted under before
// the cap: its id, or other when it has none, or one no label can hold
// (kandev's ids are UUIDs; a label value must be UTF-8, and a long one
// costs every scrape).
func workspaceOf(f scan.Finding) string {
	id := f.WorkspaceID
	if id == "" || len(id) > maxWorkspaceID || !utf8.ValidString(id) {
		return OtherWorkspaces
	}
	return id
}
