package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	promodel "github.com/prometheus/common/model"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
)

// series is /metrics as "name{label=value,…}" (labels in name order) to
// value; a histogram as its _count and _sum. Empty until the daemon
// listens.
func (d *daemonProc) series(t *testing.T) map[string]float64 {
	t.Helper()
	code, body := d.get("/metrics")
	if code != 200 {
		return map[string]float64{}
	}
	parser := expfmt.NewTextParser(promodel.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := name + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.GetHistogram() != nil:
				out[name+"_count{"+strings.Join(labels, ",")+"}"] = float64(m.GetHistogram().GetSampleCount())
				out[name+"_sum{"+strings.Join(labels, ",")+"}"] = m.GetHistogram().GetSampleSum()
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

func durationCount(s map[string]float64, kind model.Kind, cleared model.Cleared) float64 {
	return s[fmt.Sprintf("watchdogd_episode_duration_seconds_count{cleared=%s,kind=%s}", cleared, kind)]
}

// reportJSON is what the tests read of a report.
type reportJSON struct {
	SchemaVersion int `json:"schema_version"`
	Kinds         []struct {
		Kind      model.Kind            `json:"kind"`
		Opened    int                   `json:"opened"`
		Cleared   int                   `json:"cleared"`
		ClearedBy map[model.Cleared]int `json:"cleared_by"`
	} `json:"kinds"`
	AgentTimeLostSeconds int64 `json:"agent_time_lost_seconds"`
}

// TestEpisodeDurations: episodes open and resolve — a question answered,
// a stall the agent ended with output, a permission resolved by hand from
// another process — and /metrics counts each resolve once under its kind
// and code, from since; `watchdogd report --since 24h -o json` and GET
// /api/v1/report count what opened per kind as episodes_opened_total does
// and what cleared as the histogram does (the daemon ran the whole
// window). Restarted, the daemon counts none of those again, and counts a
// resolve made by hand while it was down.
func TestEpisodeDurations(t *testing.T) {
	extra, base := daemonConfig(t, "")
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	d := e.startDaemon(base)
	d.waitView(t)
	waitFor(t, 20*time.Second, "9 episodes opened", func() bool { return len(e.episodes()) == 9 })
	db := e.kandev.DB()
	if _, err := db.Exec(`UPDATE task_session_messages SET metadata = json_set(metadata, '$.status', 'answered')
	  WHERE type = 'clarification_request' AND json_extract(metadata, '$.pending_id') = 'p-auth'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE task_session_messages SET updated_at = ? WHERE turn_id = 'turn-stalled' AND type = 'tool_call'`, kandevdb.TS(time.Now())); err != nil {
		t.Fatal(err)
	}
	byHand := func(kind model.Kind) {
		t.Helper()
		for _, ep := range e.episodes() {
			if ep.Kind == kind && ep.Open() {
				if r := watchdogd(t, e.environ(), "episodes", "resolve", ep.ID, "--config", e.cfg); r.code != 0 {
					t.Fatalf("episodes resolve: %d %s", r.code, r.stderr)
				}
				return
			}
		}
		t.Fatalf("no open %s episode", kind)
	}
	byHand(model.KindPendingPermission)
	want := map[[2]string]float64{
		{string(model.KindUnansweredClarification), string(model.ClearedAnswered)}: 1,
		{string(model.KindStalledTurn), string(model.ClearedAgentOutput)}:          1,
		{string(model.KindPendingPermission), string(model.ClearedByHand)}:         1,
	}
	var s map[string]float64
	waitFor(t, 20*time.Second, "three resolves counted", func() bool {
		s = d.series(t)
		for k, n := range want {
			if durationCount(s, model.Kind(k[0]), model.Cleared(k[1])) != n {
				return false
			}
		}
		return true
	})
	// The stall's output stopped 42 minutes before the test began.
	if sum := s["watchdogd_episode_duration_seconds_sum{cleared=agent_output,kind=stalled_turn}"]; sum < 42*60 || sum > 45*60 {
		t.Errorf("the stall held %v s, want its 42 minutes and the test's seconds", sum)
	}
	time.Sleep(2 * time.Second) // more cycles: nothing is counted twice
	s = d.series(t)
	counted := 0.0
	for k, v := range s {
		if strings.HasPrefix(k, "watchdogd_episode_duration_seconds_count{") {
			counted += v
		}
	}
	if counted != 3 {
		t.Errorf("%v resolves counted, want 3", counted)
	}

	// The report agrees with the metrics, from the ledger, in another process.
	r := watchdogd(t, e.environ(), "report", "--since", "24h", "-o", "json", "--config", e.cfg)
	var rep reportJSON
	if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil || rep.SchemaVersion != 1 {
		t.Fatalf("report: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	_, api := d.get("/api/v1/report?since=24h")
	var fromAPI reportJSON
	if err := json.Unmarshal([]byte(api), &fromAPI); err != nil {
		t.Fatalf("/api/v1/report: %v %.300s", err, api)
	}
	s = d.series(t)
	for _, k := range rep.Kinds {
		if opened := s[fmt.Sprintf("watchdogd_episodes_opened_total{kind=%s}", k.Kind)]; float64(k.Opened) != opened {
			t.Errorf("%s: the report says %d opened, the metric %v", k.Kind, k.Opened, opened)
		}
		for _, c := range model.ClearedBy(k.Kind) {
			if float64(k.ClearedBy[c]) != durationCount(s, k.Kind, c) {
				t.Errorf("%s %s: the report says %d cleared, the histogram %v", k.Kind, c, k.ClearedBy[c], durationCount(s, k.Kind, c))
			}
		}
	}
	opened := map[model.Kind]int{}
	for _, k := range rep.Kinds {
		opened[k.Kind] = k.Opened
	}
	// The world's nine findings, and the permission again after its
	// resolve by hand (kandev still shows it).
	for kind, n := range map[model.Kind]int{model.KindUnansweredClarification: 2, model.KindShadowedClarification: 1, model.KindPendingPermission: 2,
		model.KindNeverStarted: 2, model.KindStalledTurn: 1, model.KindInterruptedSession: 1, model.KindMultipleOpenTurns: 1} {
		if opened[kind] != n {
			t.Errorf("report: %d %s opened, want %d", opened[kind], kind, n)
		}
	}
	for i, k := range fromAPI.Kinds {
		if k.Opened != rep.Kinds[i].Opened || k.Cleared != rep.Kinds[i].Cleared {
			t.Errorf("%s: the API says %d opened %d cleared, the command %d %d", k.Kind, k.Opened, k.Cleared, rep.Kinds[i].Opened, rep.Kinds[i].Cleared)
		}
	}
	if rep.AgentTimeLostSeconds < 42*60 {
		t.Errorf("agent time lost %d s, less than the stall's 42 minutes", rep.AgentTimeLostSeconds)
	}

	// Restarted: nothing counted again; a resolve by hand while it was
	// down is counted once it is back.
	d.terminate(t)
	byHand(model.KindMultipleOpenTurns)
	d = e.startDaemon(base)
	waitFor(t, 20*time.Second, "the resolve made while down counted", func() bool {
		return durationCount(d.series(t), model.KindMultipleOpenTurns, model.ClearedByHand) == 1
	})
	for k := range want {
		if n := durationCount(d.series(t), model.Kind(k[0]), model.Cleared(k[1])); n != 0 {
			t.Errorf("after the restart %v counted again: %v", k, n)
		}
	}
}

// TestWorkspaceSeriesCap: with metrics.by_workspace and 200 workspaces
// each with a finding, /metrics labels the first 50 seen and counts the
// other 150 as other, 51 workspaces per kind; the other series' labels are
// as without it.
func TestWorkspaceSeriesCap(t *testing.T) {
	b := kandevdb.NewBuilder(time.Now())
	for i := range 200 {
		s := b.Session(fmt.Sprintf("sess-%03d", i), "Task", fmt.Sprintf("ws-%03d", i), "RUNNING", 40*time.Minute, "")
		s.Turn(fmt.Sprintf("turn-%03d", i), 35*time.Minute, -1, "").Agent("tool_call", 30*time.Minute)
	}
	extra, base := daemonConfig(t, "metrics:\n  by_workspace: true\npolicy:\n  stalled_turn:\n    steps:\n      - {after: 0s, action: log}\n")
	e := newEnv(t, b.DS, "sqlite", extra)
	d := e.startDaemon(base)
	var s map[string]float64
	waitFor(t, 20*time.Second, "the per-workspace series", func() bool {
		s = d.series(t)
		return s["watchdogd_findings_by_workspace{kind=stalled_turn,workspace_id=other}"] == 150
	})
	workspaces, total := map[string]bool{}, 0.0
	for k, v := range s {
		if rest, ok := strings.CutPrefix(k, "watchdogd_findings_by_workspace{kind=stalled_turn,workspace_id="); ok {
			workspaces[strings.TrimSuffix(rest, "}")] = true
			total += v
		}
	}
	if len(workspaces) != 51 || !workspaces["ws-000"] || !workspaces["ws-049"] || workspaces["ws-050"] || total != 200 {
		t.Errorf("%d workspaces labelled (ws-000 %v, ws-049 %v, ws-050 %v), %v findings", len(workspaces), workspaces["ws-000"], workspaces["ws-049"], workspaces["ws-050"], total)
	}
	if s["watchdogd_findings{kind=stalled_turn}"] != 200 || s["watchdogd_oldest_finding_age_by_workspace_seconds{kind=stalled_turn,workspace_id=ws-000}"] < 30*60 {
		t.Errorf("findings %v; ws-000's oldest %v", s["watchdogd_findings{kind=stalled_turn}"], s["watchdogd_oldest_finding_age_by_workspace_seconds{kind=stalled_turn,workspace_id=ws-000}"])
	}
}
