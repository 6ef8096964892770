package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/watchdogd/watchdogd/internal/model"
)

// TestDurationSeriesAreTheClearingsThatCanHappen: the histogram's series
// exist at zero for each kind with each code it can clear with (and no
// other), and episodes_opened_total for each kind.
func TestDurationSeriesAreTheClearingsThatCanHappen(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg, "test")
	want := 0
	for _, k := range model.Kinds {
		want += len(model.ClearedBy(k))
	}
	if n := testutil.CollectAndCount(m.Lives.Duration); n != want {
		t.Errorf("%d duration series, want %d (model.ClearedBy of every kind)", n, want)
	}
	if n := testutil.CollectAndCount(m.Lives.Opened); n != len(model.Kinds) {
		t.Errorf("%d opened series, want %d", n, len(model.Kinds))
	}
	// Nothing resolved as stalled and answered; a question can be.
	if _, err := m.Lives.Duration.GetMetricWithLabelValues("stalled_turn", "answered"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(m.Lives.Duration); n != want+1 {
		t.Errorf("stalled_turn/answered was pre-created: %d series", n)
	}
}

// TestResolvedCountsEachOnce: a resolve is counted by its number once in a
// process; one handed again (an uncertain take, a restored ledger) is not;
// a code this build does not know counts as other.
func TestResolvedCountsEachOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg, "test")
	l := m.Lives
	steps := []struct {
		seq     int64
		kind    model.Kind
		cleared model.Cleared
		seconds float64
		counted bool
	}{
		{1, model.KindStalledTurn, model.ClearedAgentOutput, 1200, true},
		{2, model.KindUnansweredClarification, model.ClearedAnswered, 2400, true},
		{2, model.KindUnansweredClarification, model.ClearedAnswered, 2400, false}, // the same again
		{1, model.KindStalledTurn, model.ClearedAgentOutput, 1200, false},          // behind
		{5, model.KindStalledTurn, model.ClearedAgentOutput, 90000, true},          // a gap is fine
		{6, model.KindNeverStarted, "from_the_future", 30, true},
	}
	for _, s := range steps {
		if got := l.Resolved(s.seq, s.kind, s.cleared, s.seconds); got != s.counted {
			t.Errorf("resolve %d: counted %v, want %v", s.seq, got, s.counted)
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	count, sum := map[string]uint64{}, map[string]float64{}
	for _, f := range families {
		if f.GetName() != "watchdogd_episode_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			lab := map[string]string{}
			for _, lp := range m.GetLabel() {
				lab[lp.GetName()] = lp.GetValue()
			}
			key := lab["kind"] + "/" + lab["cleared"] + "/"
			count[key], sum[key] = m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
		}
	}
	if count["stalled_turn/agent_output/"] != 2 || sum["stalled_turn/agent_output/"] != 91200 {
		t.Errorf("stalled_turn/agent_output: %d samples, sum %v", count["stalled_turn/agent_output/"], sum["stalled_turn/agent_output/"])
	}
	if count["unanswered_clarification/answered/"] != 1 {
		t.Errorf("unanswered_clarification/answered: %d samples", count["unanswered_clarification/answered/"])
	}
	if count["never_started/other/"] != 1 {
		t.Errorf("an unknown code: %d samples under other", count["never_started/other/"])
	}
	l.Opening([]model.Episode{{Kind: model.KindStalledTurn}, {Kind: model.KindStalledTurn}, {Kind: model.KindPendingPermission}})
	if v := testutil.ToFloat64(l.Opened.WithLabelValues("stalled_turn")); v != 2 {
		t.Errorf("opened stalled_turn = %v", v)
	}
}
