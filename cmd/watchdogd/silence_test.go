package main

import (
	"testing"

	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
)

// TestSilenceQueryFilter: silence query's matchers keep a silence as
// Alertmanager's filter does: each must match the value the silence's =
// matcher gives its key, "" where it has none.
func TestSilenceQueryFilter(t *testing.T) {
	must := func(s ...string) model.Matchers {
		var out model.Matchers
		for _, x := range s {
			m, err := model.ParseMatcher(x)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
		return out
	}
	sil := ledger.Silence{Matchers: must("session_id=sess-a", "kind=stalled_turn", "workspace_id=~ws-.*")}
	for _, c := range []struct {
		filter model.Matchers
		want   bool
	}{
		{nil, true},
		{must("session_id=sess-a"), true},
		{must("session_id=sess-b"), false},
		{must("kind=stalled_turn", "session_id=~sess-.*"), true},
		{must("task_id!=t1"), true},          // it has no task_id: "" is not t1
		{must("workspace_id=ws-web"), false}, // a regex is no value to filter on
		{must("kind!=stalled_turn"), false},
	} {
		if got := selects(c.filter, sil); got != c.want {
			t.Errorf("%s: %v, want %v", c.filter, got, c.want)
		}
	}
}
