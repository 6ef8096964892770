package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevtest"
	"github.com/watchdogd/watchdogd/internal/pgtest"
	"github.com/watchdogd/watchdogd/internal/slacktest"
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
// 98 MB since, with nothing decided again. The same on PostgreSQL (kandev
// and the ledger): 0.45 s a cycle; docs/benchmarks.md has the figures.
func BenchmarkStormCycle(b *testing.B) {
	bld := kandevtest.NewBuilder(time.Now())
	for i := range 5000 {
		s := bld.Session(fmt.Sprintf("s%05d", i), fmt.Sprintf("Fix login %d", i), "ws", "RUNNING", time.Hour, "")
		s.Turn(fmt.Sprintf("turn-%05d", i), 40*time.Minute, -1, "").Agent("tool_call", 30*time.Minute)
	}
	b.Run("sqlite", func(b *testing.B) {
		c, srv, _, _ := testCycleDB(b, bld.DS, nil)
		stormCycles(b, c, srv)
	})
	// kandev and the ledger on PostgreSQL over loopback, as a deployment
	// with HA runs: a statement per episode would show here. Then both in
	// another zone, through links adding 1 ms to every round trip.
	pg, err := pgtest.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pg.Close)
	for _, rtt := range []time.Duration{0, time.Millisecond} {
		name := "postgres"
		if rtt > 0 {
			name = fmt.Sprintf("postgres-rtt%v", rtt)
		}
		b.Run(name, func(b *testing.B) {
			ledgerURL, err := pg.NewDatabase(context.Background(), "ledger")
			if err != nil {
				b.Fatal(err)
			}
			kandevURL := pgKandev(b, pg, bld.DS)
			if rtt > 0 {
				kandevURL, ledgerURL = through(b, kandevURL, rtt), through(b, ledgerURL, rtt)
			}
			c, srv, _ := cycleOn(b, kandevURL, ledgerURL, nil)
			stormCycles(b, c, srv)
		})
	}
}

// through is url through a link adding rtt to every round trip, closed
// with the test.
func through(t testing.TB, url string, rtt time.Duration) string {
	t.Helper()
	link, url, err := pgtest.StartLink(url, rtt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(link.Close)
	return url
}

// stormCycles opens the storm in a first cycle, then times the cycles
// after it. The first cycle's time (it opens 5,000 episodes and saves their
// first posts) is reported as opening-s, measured once.
func stormCycles(b *testing.B, c *Cycle, srv *slacktest.Server) {
	c.Config.Slack.MaxMessagesPerCycle = 0
	ctx := context.Background()
	start := time.Now()
	res, err := c.Run(ctx) // the storm opens
	opening := time.Since(start)
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
	b.ReportMetric(opening.Seconds(), "opening-s")
	if n := len(srv.Messages()); n != 0 {
		b.Fatalf("%d posts with no budget", n)
	}
}
