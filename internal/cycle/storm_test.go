package cycle

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
	"github.com/watchdogd/watchdogd/internal/pgtest"
)

// BenchmarkStormCycle: a cycle with 5,000 open stalled-turn episodes (a
// kandev restart on a busy install), each first post decided and held back
// from Slack's channel, which a Retry-After keeps closed for longer than the
// benchmark runs (so no cycle waits on Slack's pacing): the scan, the
// decision over the open episodes and the held deliveries, as every cycle
// of a storm runs them until the posts are out. docs/benchmarks.md has the
// figures.
func BenchmarkStormCycle(b *testing.B) {
	bld := kandevdb.NewBuilder(time.Now())
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
				kandevURL, ledgerURL = pgtest.Through(b, kandevURL, rtt), pgtest.Through(b, ledgerURL, rtt)
			}
			c, srv, _ := cycleOn(b, kandevURL, ledgerURL, nil)
			stormCycles(b, c, srv)
		})
	}
}

// stormCycles opens the storm in a first cycle, then times the cycles
// after it. The first cycle's time (it opens 5,000 episodes and saves their
// first posts) is reported as opening-s, measured once.
func stormCycles(b *testing.B, c *Cycle, srv *slacktest.Server) {
	ctx := context.Background()
	// Closed as a 429's Retry-After closes it: every post is decided and
	// held, none sent. (A budget cannot hold them all: it lets its first
	// posts out each cycle, and 0 is no bound.)
	if err := c.Store.CloseGate(ctx, c.Config.Slack.DefaultChannel, time.Now().Add(time.Hour)); err != nil {
		b.Fatal(err)
	}
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
		b.Fatalf("%d posts with the channel closed", n)
	}
}

// TestCycleRoundTripsAreFixed: over a real network every round trip to
// kandev's database or to the ledger costs a millisecond or more, so a
// cycle's round trips must not grow with the sessions it reads or the
// episodes it keeps open; only deliveries, which the Slack budget bounds,
// may each add their own (claim, then settle: exactly once needs both
// committed). Loopback would hide a statement per session or per episode
// behind its tens of microseconds; counted, it shows.
//
// Both databases are PostgreSQL, each behind a counting link, which
// leaves out the liveness pings pgx's driver sends on a connection idle
// for over a second (the clock decides those, not the work). The same
// three cycles run over 6 and over 200 stalled sessions with a budget of
// two posts a cycle: the first opens every episode and posts two, the next
// two refresh every episode and post two more each. 200 keeps every write
// within one of the ledger's batches (a thousand rows or a megabyte of
// text), past which a decision takes one more round trip per batch.
func TestCycleRoundTripsAreFixed(t *testing.T) {
	pg, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	type trips struct{ kandev, ledger int64 }
	counted := map[int][]trips{}
	for _, n := range []int{6, 200} {
		bld := kandevdb.NewBuilder(time.Now())
		for i := range n {
			s := bld.Session(fmt.Sprintf("s%03d", i), fmt.Sprintf("Fix login %d", i), "ws", "RUNNING", time.Hour, "")
			s.Turn(fmt.Sprintf("turn-%03d", i), 40*time.Minute, -1, "").Agent("tool_call", 30*time.Minute)
		}
		kandevLink, kandevURL, err := pgtest.StartLink(pgKandev(t, pg, bld.DS), 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(kandevLink.Close)
		ledgerURL, err := pg.NewDatabase(context.Background(), "ledger")
		if err != nil {
			t.Fatal(err)
		}
		ledgerLink, ledgerURL, err := pgtest.StartLink(ledgerURL, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ledgerLink.Close)
		c, srv, _ := cycleOn(t, kandevURL, ledgerURL, nil)
		c.Config.Slack.MaxMessagesPerCycle = 2
		for cycle := range 3 {
			k, l := kandevLink.RoundTrips(), ledgerLink.RoundTrips()
			res, err := c.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res.Report.Findings); got != n || res.Counts["delivered"] != 2 {
				t.Fatalf("%d sessions, cycle %d: %d findings, outcomes %v", n, cycle+1, got, res.Counts)
			}
			counted[n] = append(counted[n], trips{kandevLink.RoundTrips() - k, ledgerLink.RoundTrips() - l})
		}
		if got := len(srv.Messages()); got != 6 {
			t.Fatalf("%d sessions: %d posts, want 6", n, got)
		}
	}
	t.Logf("round trips per cycle (kandev, ledger): 6 sessions %v, 200 sessions %v", counted[6], counted[200])
	for cycle := range 3 {
		if counted[6][cycle] != counted[200][cycle] {
			t.Errorf("cycle %d: round trips (kandev, ledger) %v at 6 sessions, %v at 200", cycle+1, counted[6][cycle], counted[200][cycle])
		}
	}
}

// pgKandev is a kandev database on pg holding ds; its URL.
func pgKandev(t testing.TB, pg *pgtest.Server, ds kandevdb.Dataset) string {
	t.Helper()
	ctx := context.Background()
	url, err := pg.NewDatabase(ctx, "kandev")
	if err != nil {
		t.Fatal(err)
	}
	db, err := kandevdb.CreatePostgres(ctx, url, kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Write(ctx, ds); err != nil {
		t.Fatal(err)
	}
	return db.URL()
}
