package cycle

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/alertmanager"
	"github.com/watchdogd/watchdogd/internal/notify/logline"
	"github.com/watchdogd/watchdogd/internal/notify/registry"
	"github.com/watchdogd/watchdogd/internal/notify/webhook"
	"github.com/watchdogd/watchdogd/internal/notify/webhook/webhooktest"
)

const hookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// withOutlets gives c a config whose stalled_turn ladder is steps (YAML),
// with a webhook "ops" at hook and an Alertmanager at am (either may be
// empty), and the outlets for it; the clock starts now.
func withOutlets(t *testing.T, c *Cycle, steps, hook, am string) *time.Time {
	t.Helper()
	text := "policy:\n  stalled_turn:\n    steps:\n" + steps
	if hook != "" {
		secret := filepath.Join(t.TempDir(), "ops-hook")
		if err := os.WriteFile(secret, []byte(hookSecret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		text += "webhooks:\n  - name: ops\n    url: " + hook + "\n    secret_file: " + secret + "\n"
	}
	if am != "" {
		text += "alertmanager:\n  urls: [\"" + am + "\"]\n"
	}
	cfg, err := config.Parse("t.yaml", []byte(text), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	c.Config = cfg
	set := registry.Set{Log: &logline.Outlet{}}
	if hook != "" {
		set.Webhook = webhook.New(cfg.Webhooks)
	}
	if am != "" {
		if set.Alertmanager, err = alertmanager.New(cfg); err != nil {
			t.Fatal(err)
		}
	}
	c.Outlets = registry.Register(set)
	clock := time.Now()
	c.Now = func() time.Time { return clock }
	return &clock
}

// TestWebhookStepAndResolve: a stalled turn reaches the webhook once,
// signed, keyed by its action; when the turn completes the webhook hears
// "resolved" under another key; nothing more after that.
func TestWebhookStepAndResolve(t *testing.T) {
	c, _, _, db := testCycleDB(t, oneStall().DS, nil)
	rcv := webhooktest.Start(t, hookSecret)
	withOutlets(t, c, "      - {after: 0s, action: webhook}\n", rcv.URL, "")
	ctx := context.Background()
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	got := rcv.Deliveries()
	if len(got) != 1 || !got[0].Verified || got[0].ID != got[0].IdempotencyKey {
		t.Fatalf("deliveries %+v, want one verified, keyed", got)
	}
	if ev, key := got[0].Event(); ev != "step" || key != got[0].ID {
		t.Errorf("event %q key %q, want a step keyed %s", ev, key, got[0].ID)
	}
	var p webhook.Payload
	if err := json.Unmarshal(got[0].Body, &p); err != nil || p.Episode.Kind != model.KindStalledTurn || p.Finding.SessionID != "s1" || p.Episode.Step != 1 {
		t.Errorf("payload %+v: %v", p, err)
	}
	if _, err := db.DB().Exec(`UPDATE task_session_turns SET completed_at = ? WHERE id = 'turn-1'`, kandevdb.TS(time.Now())); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got = rcv.Deliveries()
	if len(got) != 2 || !got[1].Verified {
		t.Fatalf("deliveries %+v, want the step and one resolve", got)
	}
	if ev, key := got[1].Event(); ev != "resolved" || key == got[0].ID || got[1].ID != key {
		t.Errorf("second delivery: event %q key %q (step key %s)", ev, key, got[0].ID)
	}
}

// TestWebhookRetryAfter: a 429's Retry-After is waited out, whatever the
// cycles in between: the webhook's gate is closed until then.
func TestWebhookRetryAfter(t *testing.T) {
	b := oneStall()
	s := b.Session("s2", "Other", "ws", "RUNNING", time.Hour, "")
	s.Turn("turn-2", 40*time.Minute, -1, "").Agent("tool_call", 30*time.Minute)
	c, _, _, _ := testCycleDB(t, b.DS, nil)
	rcv := webhooktest.Start(t, hookSecret)
	rcv.Answer(func(n int, _ webhooktest.Delivery) webhooktest.Answer {
		if n == 1 {
			return webhooktest.Answer{Status: http.StatusTooManyRequests, RetryAfter: "120"}
		}
		return webhooktest.Answer{Status: http.StatusOK}
	})
	clock := withOutlets(t, c, "      - {after: 0s, action: webhook}\n", rcv.URL, "")
	ctx := context.Background()
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(rcv.Deliveries()); n != 1 {
		t.Fatalf("%d requests in the first cycle, want 1: the 429 closes the webhook to the second action", n)
	}
	*clock = clock.Add(time.Minute)
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(rcv.Deliveries()); n != 1 {
		t.Fatalf("%d requests a minute later, want still 1 (Retry-After: 120)", n)
	}
	*clock = clock.Add(61 * time.Second)
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	got := rcv.Deliveries()
	if len(got) != 3 || got[1].Status != 200 || got[2].Status != 200 {
		t.Fatalf("deliveries %+v, want the two steps once the wait is over", got)
	}
}

// TestWebhookHeldBySilence: silences hold webhook steps, as they hold
// Slack's.
func TestWebhookHeldBySilence(t *testing.T) {
	c, _, _, _ := testCycleDB(t, oneStall().DS, nil)
	rcv := webhooktest.Start(t, hookSecret)
	withOutlets(t, c, "      - {after: 0s, action: webhook}\n", rcv.URL, "")
	ctx := context.Background()
	if err := c.Store.AddSilence(ctx, ledger.Silence{ID: "sil", Matchers: model.Matchers{model.Equal("session_id", "s1")}, CreatedAt: time.Now(), Until: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rcv.Deliveries()); n != 0 || res.Counts[model.ResultDeferred] != 1 {
		t.Fatalf("%d deliveries while silenced, outcomes %v", n, res.Counts)
	}
}

// fakeAM is an Alertmanager's API as far as watchdogd uses it: it records
// each batch posted.
type fakeAM struct {
	mu      sync.Mutex
	batches [][]alertmanager.Alert
}

func (f *fakeAM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var batch []alertmanager.Alert
	if r.URL.Path != "/api/v2/alerts" || json.NewDecoder(r.Body).Decode(&batch) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.batches = append(f.batches, batch)
	f.mu.Unlock()
}

func (f *fakeAM) posted() [][]alertmanager.Alert {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]alertmanager.Alert(nil), f.batches...)
}

// TestAlertmanagerStepResendResolve: the step posts the episode's alert;
// resends carry it while it is open, from the ledger alone; the resolve
// ends it, and resends carry the end for a while, then stop.
func TestAlertmanagerStepResendResolve(t *testing.T) {
	c, _, _, db := testCycleDB(t, oneStall().DS, nil)
	am := &fakeAM{}
	srv := httptest.NewServer(am)
	t.Cleanup(srv.Close)
	clock := withOutlets(t, c, "      - {after: 0s, action: alertmanager}\n", "", srv.URL)
	ctx := context.Background()
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	posted := am.posted()
	if len(posted) != 1 || len(posted[0]) != 1 || posted[0][0].Labels["alertname"] != "KandevStalledTurn" || posted[0][0].EndsAt != "" {
		t.Fatalf("posted %+v, want the stalled turn's alert firing", posted)
	}
	o := c.Outlets[model.ActionAlertmanager].Outlet.(*alertmanager.Outlet)
	if n, err := o.Resend(ctx, c.Store, *clock); n != 1 || err != nil {
		t.Fatalf("resend: %d %v", n, err)
	}
	if got := am.posted()[1][0]; got.Labels["episode_id"] != posted[0][0].Labels["episode_id"] || got.EndsAt != "" {
		t.Errorf("resent %+v, want the same alert firing", got)
	}
	if _, err := db.DB().Exec(`UPDATE task_session_turns SET completed_at = ? WHERE id = 'turn-1'`, kandevdb.TS(time.Now())); err != nil {
		t.Fatal(err)
	}
	*clock = clock.Add(time.Minute)
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	posted = am.posted()
	if last := posted[len(posted)-1]; len(posted) != 3 || len(last) != 1 || last[0].EndsAt == "" {
		t.Fatalf("posted %+v, want the resolve to end the alert", posted)
	}
	*clock = clock.Add(10 * time.Minute)
	if n, err := o.Resend(ctx, c.Store, *clock); n != 1 || err != nil || am.posted()[3][0].EndsAt == "" {
		t.Fatalf("resend 10 minutes after the end: %d %v, want the end again", n, err)
	}
	*clock = clock.Add(10 * time.Minute)
	if n, err := o.Resend(ctx, c.Store, *clock); n != 0 || err != nil {
		t.Fatalf("resend 20 minutes after the end: %d %v, want nothing", n, err)
	}
}

// TestWebhookLaneApart: a Slack channel and a webhook both named "ops":
// Slack's Retry-After on its channel does not hold the webhook.
func TestWebhookLaneApart(t *testing.T) {
	c, _, _, _ := testCycleDB(t, oneStall().DS, nil)
	rcv := webhooktest.Start(t, hookSecret)
	withOutlets(t, c, "      - {after: 0s, action: webhook}\n", rcv.URL, "")
	if err := c.Store.CloseGate(context.Background(), "ops", c.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(rcv.Deliveries()); n != 1 {
		t.Fatalf("%d webhook deliveries, want 1: Slack's gate on its channel ops held the webhook ops", n)
	}
}

// TestRetryAfterCountsFromTheAnswer: a 429 that took 30 s to come back
// with Retry-After: 120 keeps the webhook closed for 120 s after the
// answer, not after the request went out — opening at 120 s would send
// inside the service's own window.
func TestRetryAfterCountsFromTheAnswer(t *testing.T) {
	b := oneStall()
	s := b.Session("s2", "Other", "ws", "RUNNING", time.Hour, "")
	s.Turn("turn-2", 40*time.Minute, -1, "").Agent("tool_call", 30*time.Minute)
	c, _, _, _ := testCycleDB(t, b.DS, nil)
	rcv := webhooktest.Start(t, hookSecret)
	withOutlets(t, c, "      - {after: 0s, action: webhook}\n", rcv.URL, "")
	var mu sync.Mutex
	clock := time.Now()
	c.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	rcv.Answer(func(n int, _ webhooktest.Delivery) webhooktest.Answer {
		if n == 1 {
			advance(30 * time.Second) // the answer is slow to come
			return webhooktest.Answer{Status: http.StatusTooManyRequests, RetryAfter: "120"}
		}
		return webhooktest.Answer{Status: http.StatusOK}
	})
	ctx := context.Background()
	steps := []struct {
		advance time.Duration
		want    int // requests the receiver has seen after the cycle
	}{
		{0, 1},                 // the 429; the second action is held by the gate
		{110 * time.Second, 1}, // 140 s after the request, 110 s after the answer: still closed
		{11 * time.Second, 3},  // 121 s after the answer: both go
	}
	for i, st := range steps {
		advance(st.advance)
		if _, err := c.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if n := len(rcv.Deliveries()); n != st.want {
			t.Fatalf("cycle %d: %d requests, want %d", i+1, n, st.want)
		}
	}
}

// TestWebhookGoneCloses: a receiver answering 410 Gone fails its step and
// closes the webhook in the ledger, keyed by its name and a hash of its
// URL: the step queued behind it fails without being sent, counted, and
// the closed gauge says one. The config naming the webhook at another URL
// opens it again, and the steps after go there.
func TestWebhookGoneCloses(t *testing.T) {
	b := oneStall()
	s := b.Session("s2", "Other", "ws", "RUNNING", time.Hour, "")
	s.Turn("turn-2", 40*time.Minute, -1, "").Agent("tool_call", 30*time.Minute)
	c, _, _, _ := testCycleDB(t, b.DS, nil)
	rcv := webhooktest.Start(t, hookSecret)
	rcv.Answer(func(int, webhooktest.Delivery) webhooktest.Answer { return webhooktest.Answer{Status: http.StatusGone} })
	clock := withOutlets(t, c, "      - {after: 0s, action: webhook}\n    repeat_every: 10m\n", rcv.URL+"/old-token", "")
	ctx := context.Background()
	res, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rcv.Deliveries()); n != 1 || res.Counts["failed"] != 2 {
		t.Fatalf("%d requests, outcomes %v: want one 410, both steps failed", n, res.Counts)
	}
	holds, err := c.Store.Holds(ctx, *clock)
	if err != nil || len(holds) != 1 || holds[0].Outlet != "webhook" || holds[0].Destination != webhook.DestinationKey(c.Config.Webhooks[0]) ||
		strings.Contains(holds[0].Destination, "old-token") || !strings.HasPrefix(holds[0].Destination, "ops#") {
		t.Fatalf("holds %+v: %v", holds, err)
	}
	for _, a := range res.Plan.Actions {
		got, _ := c.Store.Action(ctx, a.Key)
		if got.State != model.StateFailed || !strings.Contains(got.Error, "410") {
			t.Errorf("action %s: %s %q", a.Key, got.State, got.Error)
		}
	}
	if n := testutil.ToFloat64(c.Metrics.ClosedActions.WithLabelValues("webhook")); n != 1 {
		t.Errorf("closed_destination_actions_total %v, want 1 (the step behind the 410)", n)
	}
	if n := testutil.ToFloat64(c.Metrics.DestinationsClosed.WithLabelValues("webhook")); n != 1 {
		t.Errorf("destinations_closed %v, want 1", n)
	}

	rcv.Answer(func(int, webhooktest.Delivery) webhooktest.Answer { return webhooktest.Answer{Status: http.StatusOK} })
	c.Config.Webhooks[0].URL = rcv.URL + "/new-token"
	c.Outlets = registry.Register(registry.Set{Log: &logline.Outlet{}, Webhook: webhook.New(c.Config.Webhooks)})
	*clock = clock.Add(25 * time.Minute) // repeats come due
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if holds, _ := c.Store.Holds(ctx, *clock); len(holds) != 0 {
		t.Fatalf("holds %+v after the URL changed, want none", holds)
	}
	// Sent, whatever the receiver makes of a timestamp 25 minutes ahead.
	if got := rcv.Deliveries(); len(got) != 3 {
		t.Fatalf("deliveries %+v, want the two repeats at the new URL", got)
	}
	if n := testutil.ToFloat64(c.Metrics.DestinationsClosed.WithLabelValues("webhook")); n != 0 {
		t.Errorf("destinations_closed %v, want 0", n)
	}
}
