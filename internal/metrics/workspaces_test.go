package metrics

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

var wsNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// findingsIn is one stalled turn in each workspace, aged age seconds.
func findingsIn(age int64, ids ...string) []scan.Finding {
	var out []scan.Finding
	for _, id := range ids {
		out = append(out, scan.Finding{Kind: model.KindStalledTurn, WorkspaceID: id, AgeSeconds: age})
	}
	return out
}

func workspaceIDs(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s%03d", prefix, i))
	}
	return out
}

// labelledWorkspaces are the workspace_id values the findings series has.
func labelledWorkspaces(t *testing.T, w *Workspaces) map[string]bool {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(w.Findings)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "workspace_id" {
					out[l.GetValue()] = true
				}
			}
		}
	}
	return out
}

// TestWorkspacesStayWithinTheCap: with 200 workspaces and the default cap,
// the first 50 seen are labelled (every kind at zero but theirs) and the
// other 150 count as other; the oldest age is theirs, and other's is the
// oldest of the rest. Off, there are no series at all.
func TestWorkspacesStayWithinTheCap(t *testing.T) {
	m := New(prometheus.NewRegistry(), "test")
	w := m.Workspaces
	ids := workspaceIDs("ws-", 200)
	w.Observe(findingsIn(60, ids...), PerWorkspace{On: false, Max: 50}, wsNow)
	if n := testutil.CollectAndCount(w.Findings) + testutil.CollectAndCount(w.Oldest); n != 0 {
		t.Fatalf("by_workspace off: %d series", n)
	}
	fs := findingsIn(60, ids...)
	fs[120].AgeSeconds = 999 // past the cap: other's oldest
	fs[3].AgeSeconds = 500
	w.Observe(fs, PerWorkspace{On: true, Max: 50}, wsNow)
	got := labelledWorkspaces(t, w)
	if len(got) != 51 || !got["ws-000"] || !got["ws-049"] || got["ws-050"] || !got[OtherWorkspaces] {
		t.Fatalf("labelled %d workspaces: %v", len(got), got)
	}
	if n := testutil.CollectAndCount(w.Findings); n != 51*len(model.Kinds) {
		t.Errorf("%d findings series, want %d", n, 51*len(model.Kinds))
	}
	for _, c := range []struct {
		g          *prometheus.GaugeVec
		ws, kind   string
		want       float64
		whatItSays string
	}{
		{w.Findings, "ws-000", "stalled_turn", 1, "its own finding"},
		{w.Findings, "ws-000", "never_started", 0, "a kind it has none of, at zero"},
		{w.Findings, OtherWorkspaces, "stalled_turn", 150, "the rest's findings"},
		{w.Oldest, "ws-003", "stalled_turn", 500, "its oldest"},
		{w.Oldest, OtherWorkspaces, "stalled_turn", 999, "the oldest of the rest"},
	} {
		if v := testutil.ToFloat64(c.g.WithLabelValues(c.ws, c.kind)); v != c.want {
			t.Errorf("%s %s: %v, want %v (%s)", c.ws, c.kind, v, c.want, c.whatItSays)
		}
	}
	w.Observe(nil, PerWorkspace{On: false, Max: 50}, wsNow)
	if n := testutil.CollectAndCount(w.Findings) + testutil.CollectAndCount(w.Oldest); n != 0 {
		t.Fatalf("turned off: %d series left", n)
	}
}

// TestIdleWorkspacesLoseTheirSeries: a labelled workspace with no finding
// for 24 h loses its series, and its place goes to the first workspace
// counted as other; one that had a finding within the 24 h keeps its
// series (at zero). Workspace ids no label can hold count as other.
func TestIdleWorkspacesLoseTheirSeries(t *testing.T) {
	m := New(prometheus.NewRegistry(), "test")
	w := m.Workspaces
	on := PerWorkspace{On: true, Max: 2}
	w.Observe(findingsIn(1, "a", "b", "c"), on, wsNow)
	if got := labelledWorkspaces(t, w); len(got) != 3 || !got["a"] || !got["b"] || got["c"] {
		t.Fatalf("first: %v", got)
	}
	// a is quiet for a while; b and c keep finding.
	w.Observe(findingsIn(1, "b", "c"), on, wsNow.Add(23*time.Hour))
	if got := labelledWorkspaces(t, w); !got["a"] || got["c"] {
		t.Fatalf("after 23 h: %v", got)
	}
	if v := testutil.ToFloat64(w.Findings.WithLabelValues("a", "stalled_turn")); v != 0 {
		t.Errorf("a, quiet: %v", v)
	}
	w.Observe(findingsIn(1, "b", "c"), on, wsNow.Add(24*time.Hour))
	if got := labelledWorkspaces(t, w); got["a"] || !got["b"] || !got["c"] {
		t.Fatalf("after 24 h: %v, want a gone and c in its place", got)
	}
	if v := testutil.ToFloat64(w.Findings.WithLabelValues(OtherWorkspaces, "stalled_turn")); v != 0 {
		t.Errorf("other, with c labelled: %v", v)
	}
	w.Observe(findingsIn(1, "", "x\xffy", string(make([]byte, 200))), on, wsNow.Add(25*time.Hour))
	if v := testutil.ToFloat64(w.Findings.WithLabelValues(OtherWorkspaces, "stalled_turn")); v != 3 {
		t.Errorf("ids no label holds: other = %v, want 3", v)
	}
	// A new cap starts afresh, first seen first among what is found now.
	w.Observe(findingsIn(1, "c", "b"), PerWorkspace{On: true, Max: 1}, wsNow.Add(26*time.Hour))
	if got := labelledWorkspaces(t, w); len(got) != 2 || !got["c"] {
		t.Fatalf("a new cap: %v", got)
	}
}
