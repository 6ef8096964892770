package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevtest"
	"github.com/watchdogd/watchdogd/internal/pgtest"
)

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
		bld := kandevtest.NewBuilder(time.Now())
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
func pgKandev(t testing.TB, pg *pgtest.Server, ds kandevtest.Dataset) string {
	t.Helper()
	ctx := context.Background()
	url, err := pg.NewDatabase(ctx, "kandev")
	if err != nil {
		t.Fatal(err)
	}
	db, err := kandevtest.CreatePostgres(ctx, url, kandevtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Write(ctx, ds); err != nil {
		t.Fatal(err)
	}
	return db.URL()
}
