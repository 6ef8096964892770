package snooze_test

import (
	"context"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/notify/snooze"
)

var t0 = time.Date(2026, 12, 3, 3, 10, 0, 0, time.UTC)

// TestSilence: a snooze silences the session and kind, and the episode
// whatever its kind turns to, until its end; a
// resolve until the finding clears (bounded); both named by the click and
// made by who clicked.
func TestSilence(t *testing.T) {
	e := model.Episode{ID: "ep1", SessionID: "s1", Kind: model.KindStalledTurn, Identity: "stalled_turn|s1|turn-1|"}
	cases := []struct {
		name       string
		kind       model.ActionKind
		body       model.ClickBody
		until      time.Time
		untilClear bool
	}{
		// Snooze 1h: until the end the click decided.
		{"snooze", model.ActionSnooze, model.ClickBody{User: "U1", What: "1h", Until: t0.Add(time.Hour)}, t0.Add(time.Hour), false},
		// Resolve: until the finding clears, at most ResolveBound.
		{"resolve", model.ActionResolve, model.ClickBody{User: "U1"}, t0.Add(snooze.ResolveBound), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := model.Action{Key: "0123456789abcdef0123", Kind: c.kind, CreatedAt: t0}
			v := snooze.Silence(a, e, c.body)
			if v.ID != "slack-0123456789abcdef" || v.Matchers.String() != `session_id="s1" kind="stalled_turn"` || v.Identity != e.Identity || v.CreatedBy != "slack:U1" ||
				!v.Until.Equal(c.until) || v.UntilClear != c.untilClear {
				t.Fatalf("silence %+v", v)
			}
		})
	}
}

// TestSendResolves: a resolve stores its silence and resolves the episode;
// a snooze only stores its silence; a ledger error is retried.
func TestSendResolves(t *testing.T) {
	var silences []ledger.Silence
	var resolved []string
	fail := false
	o := &snooze.Outlet{
		AddSilence: func(_ context.Context, v ledger.Silence) error {
			if fail {
				return context.DeadlineExceeded
			}
			silences = append(silences, v)
			return nil
		},
		Resolve: func(_ context.Context, id string, why model.Reason, _ time.Time) error {
			if why.Words() != "resolved from Slack by U1" || why.Code != model.ClearedFromSlack {
				t.Errorf("resolved with %+v", why)
			}
			resolved = append(resolved, id)
			return nil
		},
	}
	e := model.Episode{ID: "ep1", SessionID: "s1", Kind: model.KindStalledTurn, Identity: "stalled_turn|s1|turn-1|"}
	send := func(kind model.ActionKind) notify.Sent {
		body := model.ClickBody{User: "U1", What: "1h", Until: t0.Add(time.Hour)}.Encode()
		return o.Send(context.Background(), notify.Attempt{Action: model.Action{Key: "k-" + string(kind), Kind: kind, Body: body, CreatedAt: t0}, Episode: e, Now: t0})
	}
	if s := send(model.ActionSnooze); s.Outcome == nil || s.Outcome.State != model.StateDelivered || len(silences) != 1 || len(resolved) != 0 {
		t.Fatalf("snooze: %+v %v %v", s, silences, resolved)
	}
	if s := send(model.ActionResolve); s.Outcome == nil || s.Outcome.State != model.StateDelivered || len(silences) != 2 || len(resolved) != 1 {
		t.Fatalf("resolve: %+v %v %v", s, silences, resolved)
	}
	fail = true
	if s := send(model.ActionSnooze); s.Err == nil || !s.Verdict.Retry {
		t.Fatalf("a ledger error: %+v", s)
	}
}
