//go:build faults

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/webhook/webhooktest"
)

// TestFaultWebhookGone: a receiver answers its first request 410 Gone.
// The webhook is closed in the ledger, by its name and a hash of its URL
// (which holds a token): the step that got the 410 and the one queued
// behind it fail, those without being sent, counted; the status
// page, the API and the gauge say the webhook is closed, and none of them
// nor the log names its URL. `watchdogd episodes retry` reopens it, and
// the daemon sends every step again, to a receiver that takes them.
func TestFaultWebhookGone(t *testing.T) {
	rcv := webhooktest.Start(t, hookSecret)
	rcv.Answer(func(n int, _ webhooktest.Delivery) webhooktest.Answer {
		if n == 1 {
			return webhooktest.Answer{Status: http.StatusGone}
		}
		return webhooktest.Answer{Status: http.StatusOK}
	})
	const token = "tok-do-not-print-4f1c"
	extra, base := daemonConfig(t, hookConfig(t, rcv.URL+"/hooks/"+token, hookSecret, `policy:
  stalled_turn:
    steps: [{after: 0s, action: webhook}]
  unanswered_clarification:
    steps: [{after: 0s, action: webhook}]
`))
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	d := e.startDaemon(base)
	// world's stalled turn and two questions: a step each.
	const steps = 3
	failed := func() int {
		n := 0
		for _, a := range e.actions() {
			if a.Kind == model.ActionWebhook && a.State == model.StateFailed {
				n++
			}
		}
		return n
	}
	waitFor(t, 30*time.Second, "every step failed", func() bool { return failed() == steps })
	if n := len(rcv.Deliveries()); n != 1 {
		t.Fatalf("%d requests to the receiver, want only the one answered 410", n)
	}
	waitFor(t, 10*time.Second, "the closed gauge", func() bool { return d.metric(t, `watchdogd_destinations_closed{outlet="webhook"}`) == 1 })
	if n := d.metric(t, `watchdogd_closed_destination_actions_total{outlet="webhook"}`); n != steps-1 {
		t.Errorf("closed_destination_actions_total %v, want %d (the steps behind the 410)", n, steps-1)
	}
	var api struct {
		Closed []struct{ Outlet, Name, Why string } `json:"closed_destinations"`
	}
	waitFor(t, 10*time.Second, "the closure on the page and in the API", func() bool {
		_, page := d.get("/")
		_, body := d.get("/api/v1/findings")
		return strings.Contains(page, "closed</span> webhook <b>hook</b>") && json.Unmarshal([]byte(body), &api) == nil && len(api.Closed) == 1
	})
	if c := api.Closed[0]; c.Outlet != "webhook" || c.Name != "hook" || !strings.Contains(c.Why, "410 Gone") || !strings.Contains(c.Why, "episodes retry") {
		t.Errorf("closed destination %+v", c)
	}
	time.Sleep(3 * time.Second) // cycles more: nothing is sent to a closed webhook
	if n := len(rcv.Deliveries()); n != 1 {
		t.Fatalf("%d requests to the closed webhook", n)
	}

	r := watchdogd(t, e.environ(), "episodes", "retry", "--config", e.cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "reopened webhook hook") || !strings.Contains(r.stdout, fmt.Sprintf("queued %d failed action(s) again", steps)) {
		t.Fatalf("episodes retry: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	waitFor(t, 30*time.Second, "every step delivered after the reopening", func() bool {
		ok := 0
		for _, dl := range rcv.Deliveries() {
			if dl.Status == http.StatusOK && dl.Verified {
				ok++
			}
		}
		return ok == steps
	})
	waitFor(t, 10*time.Second, "the closed gauge back to 0", func() bool { return d.metric(t, `watchdogd_destinations_closed{outlet="webhook"}`) == 0 })
	for _, o := range []string{d.out.String(), r.stdout} {
		if strings.Contains(o, token) {
			t.Fatalf("the webhook's URL leaked:\n%.3000s", o)
		}
	}
	secretsAbsent(t, d, token)
	d.terminate(t)
}
