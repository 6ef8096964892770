package cycle

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/logline"
	"github.com/watchdogd/watchdogd/internal/notify/registry"
	"github.com/watchdogd/watchdogd/internal/notify/webhook"
	"github.com/watchdogd/watchdogd/internal/notify/webhook/webhooktest"
)

// stalls is kandev with n stalled turns, sessions s0…s(n-1).
func stalls(n int) kandevdb.Dataset {
	b := kandevdb.NewBuilder(time.Now())
	for i := range n {
		s := b.Session(fmt.Sprintf("s%d", i), fmt.Sprintf("Task %d", i), "ws", "RUNNING", time.Hour, "")
		s.Turn(fmt.Sprintf("turn-%d", i), 40*time.Minute, -1, "").Agent("tool_call", 30*time.Minute)
	}
	return b.DS
}

// twoHooks gives c two webhooks, "hung" and "ok", each a step of every
// stall, answering within 300ms, and returns c's clock.
func twoHooks(t *testing.T, c *Cycle, hung, ok string) *time.Time {
	t.Helper()
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(hookSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	text := "policy:\n  stalled_turn:\n    steps:\n      - {after: 0s, action: webhook, webhook: hung}\n      - {after: 0s, action: webhook, webhook: ok}\n" +
		"webhooks:\n  - {name: hung, url: " + hung + ", secret_file: " + secret + ", timeout: 300ms}\n" +
		"  - {name: ok, url: " + ok + ", secret_file: " + secret + ", timeout: 300ms}\n"
	cfg, err := config.Parse("t.yaml", []byte(text), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	c.Config = cfg
	c.Outlets = registry.Register(registry.Set{Log: &logline.Outlet{}, Webhook: webhook.New(cfg.Webhooks)})
	clock := time.Now()
	c.Now = func() time.Time { return clock }
	return &clock
}

// TestLanesHungBesideHealthy: a webhook that never answers and one that
// does, 20 episodes each. The healthy one receives all 20 in the first
// cycle; the hung one is tried once, its lane is held (down, the other 19
// deferred, not failed), probed once when its backoff ends, held twice as
// long when the probe times out too, and delivers everything in the cycle
// whose probe it answers.
func TestLanesHungBesideHealthy(t *testing.T) {
	c, _, m, _ := testCycleDB(t, stalls(20), nil)
	hung, ok := webhooktest.Start(t, hookSecret), webhooktest.Start(t, hookSecret)
	hung.Answer(func(int, webhooktest.Delivery) webhooktest.Answer { return webhooktest.Answer{Hang: true} })
	clock := twoHooks(t, c, hung.URL, ok.URL)
	ctx := context.Background()
	laneUp := func(dest string) float64 { return testutil.ToFloat64(m.LaneUp.WithLabelValues("webhook", dest)) }

	res, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ok.Deliveries()); n != 20 {
		t.Fatalf("the healthy webhook received %d in the first cycle, want 20", n)
	}
	if n := len(hung.Deliveries()); n != 1 {
		t.Fatalf("the hung webhook was tried %d times in the first cycle, want once (then its lane holds)", n)
	}
	if res.Counts[model.ResultFailed] != 0 || res.Counts[model.ResultDeferred] != 19 || res.Counts[model.ResultRetried] != 1 {
		t.Errorf("counts %v: want 20 delivered, 1 retried, 19 deferred, none failed", res.Counts)
	}
	if laneUp("hung") != 0 || laneUp("ok") != 1 || laneUp("removed") != 1 {
		t.Errorf("lane_up hung %v ok %v removed %v, want 0 1 1", laneUp("hung"), laneUp("ok"), laneUp("removed"))
	}
	holds, err := c.Store.Holds(ctx, *clock)
	if err != nil || len(holds) != 1 || holds[0].Failures != 1 || holds[0].Until.Sub(*clock) > 5*time.Second {
		t.Fatalf("holds %+v (%v), want the hung webhook's, for 5s", holds, err)
	}

	// Inside the backoff: nothing is sent to it.
	*clock = clock.Add(2 * time.Second)
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(hung.Deliveries()); n != 1 {
		t.Fatalf("%d requests to the hung webhook inside its backoff", n-1)
	}
	// Its backoff over: one probe, which hangs too: held for 10s.
	*clock = clock.Add(4 * time.Second)
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(hung.Deliveries()); n != 2 {
		t.Fatalf("%d requests to the hung webhook after its backoff, want one probe", n-1)
	}
	if h, held, _ := c.Store.HoldOf(ctx, "webhook", webhook.DestinationKey(c.Config.Webhooks[0]), *clock); !held || h.Failures != 2 ||
		h.Until.Sub(*clock) < 9*time.Second {
		t.Fatalf("after a failed probe: %+v held %v, want held about 10s more", h, held)
	}
	// It answers again: the next probe opens the lane, and every action
	// owed goes out in that cycle.
	hung.Answer(nil)
	*clock = clock.Add(11 * time.Second)
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, d := range hung.Deliveries() {
		_, k := d.Event()
		keys[k] = true
	}
	if len(keys) != 20 || laneUp("hung") != 1 {
		t.Fatalf("%d episodes reached the webhook once it answered, lane_up %v; want 20 and 1", len(keys), laneUp("hung"))
	}
	if holds, _ := c.Store.Holds(ctx, time.Time{}); len(holds) != 0 {
		t.Errorf("holds left: %+v", holds)
	}
}

// TestWebhookResolveAfterItsSteps: a step cut short (a 503: it may have
// landed) is completed with its key after its finding cleared; its
// episode's resolve waits until it has settled, so the receiver hears
// step, then resolved, the resolve's sequence higher. A step that never
// settles holds its resolve back 15 minutes at most; then it goes, with
// the higher sequence.
func TestWebhookResolveAfterItsSteps(t *testing.T) {
	for _, never := range []bool{false, true} {
		t.Run(fmt.Sprintf("step settles %v", !never), func(t *testing.T) {
			c, _, _, db := testCycleDB(t, oneStall().DS, nil)
			rcv := webhooktest.Start(t, hookSecret)
			rcv.Answer(func(n int, d webhooktest.Delivery) webhooktest.Answer {
				if ev, _ := d.Event(); ev == "step" && (n == 1 || never) {
					return webhooktest.Answer{Status: 503}
				}
				return webhooktest.Answer{Status: 200}
			})
			clock := withOutlets(t, c, "      - {after: 0s, action: webhook}\n", rcv.URL, "")
			ctx := context.Background()
			run := func(after time.Duration) {
				t.Helper()
				*clock = clock.Add(after)
				if _, err := c.Run(ctx); err != nil {
					t.Fatal(err)
				}
			}
			run(0)
			if _, err := db.DB().Exec(`UPDATE task_session_turns SET completed_at = ? WHERE id = 'turn-1'`, kandevdb.TS(time.Now())); err != nil {
				t.Fatal(err)
			}
			run(time.Second) // the resolve is decided; the step waits for its retry
			run(6 * time.Second)
			run(6 * time.Second)
			resolves := func() int {
				n := 0
				for _, d := range rcv.Deliveries() {
					if ev, _ := d.Event(); ev == "resolved" {
						n++
					}
				}
				return n
			}
			if never {
				if n := resolves(); n != 0 {
					t.Fatalf("%d resolves went while the step was owed, before 15 minutes", n)
				}
				// 16 minutes since it was decided (the receiver checks the
				// signature's timestamp against its own clock: the decision
				// moves back rather than the cycle's clock forward).
				raw, err := sql.Open("sqlite", "file:"+filepath.Join(filepath.Dir(db.Path), "state.db")+"?_pragma=busy_timeout(5000)")
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = raw.Close() }()
				if _, err := raw.Exec(`UPDATE actions SET created_us = created_us - ? WHERE seq LIKE 'resolve/%'`, (16 * time.Minute).Microseconds()); err != nil {
					t.Fatal(err)
				}
				run(6 * time.Second)
			}
			var events []string
			seq := map[string]int{}
			for _, d := range rcv.Deliveries() {
				ev, _ := d.Event()
				var p webhook.Payload
				_ = json.Unmarshal(d.Body, &p)
				events = append(events, fmt.Sprintf("%s:%d", ev, d.Status))
				seq[ev] = p.Sequence
			}
			want := "[step:503 step:200 resolved:200]"
			if never && resolves() != 1 {
				t.Fatalf("deliveries %v: want the resolve once 15 minutes passed, the step still owed", events)
			}
			if !never && fmt.Sprint(events) != want {
				t.Fatalf("deliveries %v, want %s", events, want)
			}
			if seq["resolved"] <= seq["step"] || seq["step"] != 1 {
				t.Errorf("sequences %v: want the step's 1 and the resolve's higher", seq)
			}
		})
	}
}
