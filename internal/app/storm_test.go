package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevtest"
)

// BenchmarkStormCycle: a cycle with 5,000 open stalled-turn episodes (a
// kandev restart on a busy install), each first post decided and still
// waiting for Slack's budget, which is spent (0 here, so no cycle waits on
// Slack's pacing): the scan, the decision over the open episodes and the
// held deliveries, as every cycle of a storm runs them until the posts are
// out.
//
// 2026-12-01, 2 vCPU, SQLite kandev and ledger: 1.68 s and 378 MB
// allocated per cycle before this round, which re-rendered the 5,000 stored
// first posts and re-decided them (an insert and a read each); 0.89 s and
// 98 MB since, with nothing decided again.
func BenchmarkStormCycle(b *testing.B) {
	bld := kandevtest.NewBuilder(time.Now())
	for i := range 5000 {
		s := bld.Session(fmt.Sprintf("s%05d", i), fmt.Sprintf("Fix login %d", i), "ws", "RUNNING", time.Hour, "")
		s.Turn(fmt.Sprintf("turn-%05d", i), 40*time.Minute, -1, "").Agent("tool_call", 30*time.Minute)
	}
	c, srv, _, _ := testCycleDB(b, bld.DS, nil)
	c.Config.Slack.MaxMessagesPerCycle = 0
	ctx := context.Background()
	res, err := c.Run(ctx) // the storm opens
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Plan.Open) != 5000 || res.Counts["deferred"] != 5000 {
		b.Fatalf("first cycle: %d opened, outcomes %v", len(res.Plan.Open), res.Counts)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		res, err := c.Run(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Plan.Actions) != 0 || res.Counts["deferred"] != 5000 {
			b.Fatalf("decided %d actions again, outcomes %v", len(res.Plan.Actions), res.Counts)
		}
	}
	b.StopTimer()
	if n := len(srv.Messages()); n != 0 {
		b.Fatalf("%d posts with no budget", n)
	}
}
