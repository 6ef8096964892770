package cycle

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
	"github.com/watchdogd/watchdogd/internal/policy"
)

// TestUntoldGauge: a first post Slack refuses for good leaves its episode
// untold, and the gauge says so at the next cycle; once the episode is
// retried and delivered it goes back to zero.
func TestUntoldGauge(t *testing.T) {
	b := oneStall()
	c, srv, m := testCycle(t, b.DS, nil)
	ctx := context.Background()
	untold := func() float64 { return testutil.ToFloat64(m.EpisodesUntold.WithLabelValues("stalled_turn")) }
	srv.SetFault(func(method string, _ int) slacktest.Fault {
		if method == "chat.postMessage" {
			return slacktest.Fault{SlackError: "channel_not_found"}
		}
		return slacktest.Fault{}
	})
	for i, want := range []float64{0, 1} { // the gauge shows what the last cycle left
		if _, err := c.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if untold() != want {
			t.Fatalf("cycle %d: untold %v, want %v", i+1, untold(), want)
		}
	}
	srv.SetFault(nil)
	if _, _, err := c.Store.Decide(ctx, func(st model.Ledger) (model.Plan, error) {
		p, _ := policy.RetryFailed(st, "", time.Now())
		return p, nil
	}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(srv.Messages()); n != 1 || untold() != 0 {
		t.Fatalf("%d messages and untold %v after the retry, want 1 and 0", n, untold())
	}
}

// TestLedgerLostAfterDelivery: the ledger goes away while a post is in
// flight. What the cycle could not record is logged, the open-episode
// gauges keep their last values with a warning, and the cycle, whose scan
// and delivery worked, is not reported as failed (it was, before: the
// gauges' read failed it after "cycle finished" had been logged).
func TestLedgerLostAfterDelivery(t *testing.T) {
	b := oneStall()
	c, srv, m := testCycle(t, b.DS, nil)
	core, logs := observer.New(zapcore.WarnLevel)
	c.Log = zap.New(core)
	srv.SetFault(func(method string, _ int) slacktest.Fault {
		if method == "chat.postMessage" {
			_ = c.Store.Close()
		}
		return slacktest.Fault{}
	})
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatalf("cycle failed: %v", err)
	}
	if n := len(srv.Messages()); n != 1 {
		t.Fatalf("%d messages sent", n)
	}
	for _, msg := range []string{"record action outcome", "episode gauges not updated"} {
		if logs.FilterMessage(msg).Len() != 1 {
			t.Errorf("no %q line in %v", msg, logs.All())
		}
	}
	if g := testutil.ToFloat64(m.EpisodesOpen.WithLabelValues("stalled_turn")); g != 0 {
		t.Errorf("open gauge %v, want its last value 0", g)
	}
}
