package bench

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/pgtest"
)

// TestRunTiny runs the whole benchmark at a toy size on both dialects, so
// that make bench cannot rot between the runs that produce
// docs/benchmarks.md: every figure is measured, the scan sees the same
// active sessions as the generator made, doubling the history leaves them
// unchanged, and the report has a row per dialect and the summary lines.
func TestRunTiny(t *testing.T) {
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var explain bytes.Buffer
	cfg := Config{Sizes: []Size{{"tiny", 60, 0.5, 4, 3}}, Runs: 1, CacheDir: t.TempDir(), PG: srv,
		Log: io.Discard, Explain: &explain, Now: time.Now().Truncate(time.Hour), RTT: 2 * time.Millisecond}
	results, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("%d results, want one per dialect", len(results))
	}
	for _, r := range results {
		if r.Active == 0 || r.Active == r.Sessions {
			t.Errorf("%s: %d of %d sessions active", r.Dialect, r.Active, r.Sessions)
		}
		for name, d := range map[string]time.Duration{"scan": r.Scan, "statements": r.Statements, "floor": r.Floor,
			"naive": r.Naive, "history before": r.ScanHistory1, "history2x": r.ScanHistory2,
			"floor+open": r.FloorOpen} {
			if d <= 0 {
				t.Errorf("%s: %s not measured", r.Dialect, name)
			}
		}
		if r.NaiveQueries != 1+3*r.Active {
			t.Errorf("%s: naive ran %d queries for %d active sessions", r.Dialect, r.NaiveQueries, r.Active)
		}
		checkNetwork(t, r)
	}
	for _, want := range []string{"### sqlite: sessions statement", "### postgres: messages statement", "Index Scan"} {
		if !bytes.Contains(explain.Bytes(), []byte(want)) {
			t.Errorf("plans lack %q", want)
		}
	}
	var out bytes.Buffer
	Print(&out, results)
	for _, re := range []string{`(?m)^sqlite scan/floor=[0-9.]+ naive/scan=[0-9.]+ history2x=[0-9.]+ rss_mib=0$`,
		`(?m)^postgres scan/floor=[0-9.]+ naive/scan=[0-9.]+ history2x=[0-9.]+ rss_mib=0$`, `(?m)^\s+tiny\s+sqlite\s+60\s`,
		`(?m)^through a link adding 2ms to every round trip:\n.*\n\s+tiny\s+postgres\s+\d+\s+[0-9.]+ms\s+\d+\s`} {
		if !regexp.MustCompile(re).Match(out.Bytes()) {
			t.Errorf("report does not match %s:\n%s", re, out.String())
		}
	}
}

// checkNetwork: the figures through a link are measured on PostgreSQL
// only; the naive loop pays a round trip per query, the scan a fixed few,
// and each side takes at least its round trips times the link's delay.
func checkNetwork(t *testing.T, r Result) {
	t.Helper()
	n := r.Network
	if r.Dialect != "postgres" {
		if n != nil {
			t.Errorf("%s: measured through a link", r.Dialect)
		}
		return
	}
	if n == nil {
		t.Fatal("postgres: not measured through the link")
	}
	if n.NaiveQueries != r.NaiveQueries || n.NaiveTrips != int64(n.NaiveQueries) {
		t.Errorf("through the link the naive loop ran %d queries in %d round trips, want %d of each", n.NaiveQueries, n.NaiveTrips, r.NaiveQueries)
	}
	if n.ScanTrips <= 0 || n.ScanTrips > 10 {
		t.Errorf("one scan took %d round trips, want a fixed few", n.ScanTrips)
	}
	if n.Scan < time.Duration(n.ScanTrips)*n.RTT || n.Naive < time.Duration(n.NaiveTrips)*n.RTT {
		t.Errorf("through a link of %v: scan %v in %d round trips, naive %v in %d", n.RTT, n.Scan, n.ScanTrips, n.Naive, n.NaiveTrips)
	}
}
