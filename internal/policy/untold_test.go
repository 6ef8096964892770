package policy

import (
	"slices"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// TestRetryFailed: which failed actions `episodes retry` queues again.
func TestRetryFailed(t *testing.T) {
	act := func(key string, state model.State, created time.Duration) model.Action {
		return model.Action{Key: key, Kind: model.ActionSlack, Channel: "C1", State: state, CreatedAt: t0.Add(created)}
	}
	ep := func(id string, acts ...model.Action) model.Episode {
		return model.Episode{ID: id, Kind: "stalled_turn", Actions: acts}
	}
	st := model.Ledger{Open: []model.Episode{
		// The first post failed (a revoked token): queued.
		ep("e1", act("e1-first", model.StateFailed, 0)),
		// Both steps failed: only the newest, as only the newest due
		// step ever goes out.
		ep("e2", act("e2-first", model.StateFailed, 0), act("e2-mention", model.StateFailed, 30*time.Minute)),
		// The first post failed but the mention went out: someone was told.
		ep("e3", act("e3-first", model.StateFailed, 0), act("e3-mention", model.StateDelivered, 30*time.Minute)),
		// A later step is pending or in flight: it will tell them.
		ep("e4", act("e4-first", model.StateFailed, 0), act("e4-mention", model.StatePending, 30*time.Minute)),
		ep("e5", act("e5-first", model.StateFailed, 0), act("e5-mention", model.StateClaimed, 30*time.Minute)),
		// Superseded steps do not count as reaching anyone.
		ep("e6", act("e6-first", model.StateSuperseded, 0), act("e6-mention", model.StateFailed, 30*time.Minute)),
		// A log line is not a message to anyone.
		ep("e9", act("e9-first", model.StateFailed, 0), model.Action{Key: "e9-log", Kind: model.ActionLog, State: model.StateDelivered}),
		// A Slack post and an alert both failed: each destination's newest
		// is queued, since each destination gets its own newest step.
		ep("e11", model.Action{Key: "e11-slack", Kind: model.ActionSlack, Channel: "C1", State: model.StateFailed, CreatedAt: t0},
			model.Action{Key: "e11-am", Kind: model.ActionAlertmanager, State: model.StateFailed, CreatedAt: t0.Add(time.Second)},
			model.Action{Key: "e11-mention", Kind: model.ActionSlack, Channel: "C1", State: model.StateFailed, CreatedAt: t0.Add(time.Hour)}),
		// The Slack post failed for good while the alert to Alertmanager
		// was delivered: nobody in the channel was told, and the post is
		// queued.
		ep("e12", model.Action{Key: "e12-slack", Seq: "step/stalled_turn/0/0", Kind: model.ActionSlack, Channel: "C1", State: model.StateFailed, Error: "channel_not_found", CreatedAt: t0},
			model.Action{Key: "e12-am", Seq: "step/stalled_turn/1/0", Kind: model.ActionAlertmanager, State: model.StateDelivered, CreatedAt: t0}),
		// A click whose answer failed is no step: never queued again (it
		// could answer what someone else answered since), nor untold.
		ep("e13", act("e13-first", model.StateDelivered, 0), model.Action{Key: "e13-answer", Kind: model.ActionAnswer, State: model.StateFailed, CreatedAt: t0.Add(time.Minute)}),
		// Nothing failed.
		ep("e7", act("e7-first", model.StateDelivered, 0)),
		ep("e8"),
	}}
	st.Open[0].Kind = "interrupted_session"
	cases := []struct {
		name string
		id   string
		want []string
		ok   bool
	}{
		{"all open episodes", "", []string{"e1-first", "e2-mention", "e6-mention", "e9-first", "e11-mention", "e11-am", "e12-slack"}, true},
		{"two destinations", "e11", []string{"e11-mention", "e11-am"}, true},
		{"one destination of two told", "e12", []string{"e12-slack"}, true},
		{"a failed click", "e13", nil, true},
		{"one episode", "e2", []string{"e2-mention"}, true},
		{"one that someone was told of", "e3", nil, true},
		{"an episode that is not open", "e10", nil, false},
	}
	for _, c := range cases {
		p, ok := RetryFailed(st, c.id, t0)
		if ok != c.ok || !slices.Equal(p.Requeue, c.want) || !p.Now.Equal(t0) {
			t.Errorf("%s: queued %v (ok %v), want %v (ok %v)", c.name, p.Requeue, ok, c.want, c.ok)
		}
	}
	// The episodes retry would queue are the ones an alert counts.
	if got := Untold(st); len(got) != 2 || got["interrupted_session"] != 1 || got["stalled_turn"] != 5 {
		t.Errorf("untold %v, want e1 (interrupted_session), e2, e6, e9, e11 and e12 (stalled_turn)", got)
	}
}
