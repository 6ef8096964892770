package interact_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/cycle"
	"github.com/watchdogd/watchdogd/internal/interact"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/slack"
	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// resolveClick is a block_actions payload: user clicks "Resolve" on
// episode ep1's message.
func resolveClick(t *testing.T, user string) []byte {
	t.Helper()
	v := slack.ButtonValue{Episode: "ep1", Button: model.ButtonResolve}.Encode()
	p, err := json.Marshal(map[string]any{"type": "block_actions", "user": map[string]any{"id": user}, "trigger_id": "trig-1",
		"container": map[string]any{"type": "message", "message_ts": "1.000001", "channel_id": "C1"},
		"actions":   []any{map[string]any{"type": "button", "action_id": slack.ActionPrefix + "resolve", "block_id": "b1", "value": v}}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSocketSlowClickHoldsNoOther: over Socket Mode, a click slow to save
// (here held until the test lets it go) does not hold the acknowledgement
// of one sent after it: Slack wants each within 3 seconds. Once let go,
// the slow one is acknowledged too.
func TestSocketSlowClickHoldsNoOther(t *testing.T) {
	srv := slacktest.New("xoxb-t")
	t.Cleanup(srv.Close)
	srv.EnableSocketMode("xapp-t")
	release := make(chan struct{})
	released := false
	let := func() {
		if !released {
			released = true
			close(release)
		}
	}
	t.Cleanup(let)
	h := &interact.Handler{
		Click: func(_ context.Context, in cycle.ClickIn) (cycle.Clicked, error) {
			if in.User == "U0SLOW" {
				<-release // slow whatever its deadline: the worst case
			}
			return cycle.Clicked{Keys: []string{"k-" + in.User}}, nil
		},
		Deliver: func(context.Context, []string) {},
		Form:    func(context.Context, string, string) (scan.Finding, string, error) { return scan.Finding{}, "", nil },
		Slack:   &said{}, Count: func(string) {}, Log: zap.NewNop(),
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h.Start(ctx)
	connected := make(chan struct{}, 4)
	s := &interact.Socket{Handler: h, API: interact.SocketAPI(config.Secret("xoxb-t"), config.Secret("xapp-t"), srv.APIURL()),
		Connected: func() { connected <- struct{}{} }}
	go s.Run(ctx)
	select {
	case <-connected:
	case <-time.After(20 * time.Second):
		t.Fatal("no Socket Mode connection within 20 s")
	}
	slow := srv.SendInteraction(resolveClick(t, "U0SLOW"))
	fast := srv.SendInteraction(resolveClick(t, "U0FAST"))
	acked := func(id string, within time.Duration) bool {
		for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if _, ok := srv.Acked(id); ok {
				return true
			}
		}
		return false
	}
	if !acked(fast, 10*time.Second) {
		t.Fatal("the click sent after a slow one was not acknowledged while the slow one was saving")
	}
	if _, ok := srv.Acked(slow); ok {
		t.Fatal("the slow click was acknowledged before it was saved")
	}
	let()
	if !acked(slow, 10*time.Second) {
		t.Fatal("the slow click was not acknowledged once saved")
	}
}

// TestSocketFormSentBackToMend: over Socket Mode, a form submitted with a
// question left blank is acknowledged with Slack's "errors" on that
// question's field as the envelope's payload, as the HTTP mode answers
// it: the form stays open.
func TestSocketFormSentBackToMend(t *testing.T) {
	srv := slacktest.New("xoxb-t")
	t.Cleanup(srv.Close)
	srv.EnableSocketMode("xapp-t")
	f := scan.Finding{Kind: model.KindUnansweredClarification, Detail: &scan.Detail{Questions: []scan.Question{{ID: "q1", Title: "How long?"}}}}
	h := &interact.Handler{
		Click: func(_ context.Context, in cycle.ClickIn) (cycle.Clicked, error) {
			if _, unfit := in.Read(model.Episode{ID: "ep1"}, f); unfit != "" {
				return cycle.Clicked{Refused: unfit}, nil
			}
			return cycle.Clicked{Keys: []string{"k1"}}, nil
		},
		Deliver: func(context.Context, []string) {}, Slack: &said{}, Count: func(string) {}, Log: zap.NewNop(),
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h.Start(ctx)
	connected := make(chan struct{}, 4)
	s := &interact.Socket{Handler: h, API: interact.SocketAPI(config.Secret("xoxb-t"), config.Secret("xapp-t"), srv.APIURL()),
		Connected: func() { connected <- struct{}{} }}
	go s.Run(ctx)
	select {
	case <-connected:
	case <-time.After(20 * time.Second):
		t.Fatal("no Socket Mode connection within 20 s")
	}
	view := slack.Form(f, slack.ButtonValue{Episode: "ep1", Button: model.ButtonForm}, "C1", "1.2")
	p, _ := json.Marshal(map[string]any{"type": "view_submission", "user": map[string]any{"id": "U1"},
		"view": map[string]any{"callback_id": view.CallbackID, "private_metadata": view.PrivateMetadata, "state": map[string]any{"values": map[string]any{}}}})
	id := srv.SendInteraction(p)
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if _, ok := srv.Acked(id); ok {
			break
		}
	}
	var reply struct {
		Action string            `json:"response_action"`
		Errors map[string]string `json:"errors"`
	}
	if err := json.Unmarshal(srv.AckPayload(id), &reply); err != nil || reply.Action != "errors" || reply.Errors["t0"] == "" {
		t.Fatalf("acknowledged with %s (%v), want errors on t0", srv.AckPayload(id), err)
	}
}
