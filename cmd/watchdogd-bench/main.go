// Command watchdogd-bench measures watchdogd's scan against the floor and a
// naive per-session watchdog, on SQLite and PostgreSQL, at three sizes
// (make bench; make bench-quick runs the small size only).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/watchdogd/watchdogd/internal/bench"
	"github.com/watchdogd/watchdogd/internal/pgtest"
)

func main() { os.Exit(run()) }

func run() int {
	sizes := flag.String("sizes", "small,medium,large", "comma-separated: small, medium, large")
	runs := flag.Int("runs", 5, "measured runs per figure (the median is reported)")
	cache := flag.String("cache", ".cache/bench", "where generated SQLite datasets are kept")
	binary := flag.String("binary", "bin/watchdogd", "watchdogd binary for the peak-RSS measurement (empty: skip)")
	explainFile := flag.String("explain", "", "write the scan statements' plans at the largest size to this file")
	rtt := flag.Duration("rtt", time.Millisecond, "also measure the scan and the naive loop on PostgreSQL through a link adding this round-trip time (0: skip)")
	var pgSettings []string
	flag.Func("pg-set", "a setting of the PostgreSQL server the run starts, name=value (repeatable), e.g. shared_buffers=4GB", func(kv string) error {
		pgSettings = append(pgSettings, kv)
		return nil
	})
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cfg := bench.Config{Runs: *runs, CacheDir: *cache, Binary: *binary, Log: os.Stderr, Now: time.Now().Truncate(time.Hour), RTT: *rtt}
	for _, name := range strings.Split(*sizes, ",") {
		found := false
		for _, s := range bench.Sizes {
			if s.Name == strings.TrimSpace(name) {
				cfg.Sizes, found = append(cfg.Sizes, s), true
			}
		}
		if !found {
			fmt.Fprintf(os.Stderr, "watchdogd-bench: unknown size %q\n", name)
			return 2
		}
	}
	if *explainFile != "" {
		f, err := os.Create(*explainFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "watchdogd-bench:", err)
			return 1
		}
		defer func() { _ = f.Close() }()
		cfg.Explain = f
	}
	srv, err := pgtest.StartWith(pgSettings...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "watchdogd-bench:", err)
		return 1
	}
	defer srv.Close()
	cfg.PG = srv
	results, err := bench.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "watchdogd-bench:", err)
		return 1
	}
	if len(pgSettings) > 0 {
		// With the table, so that figures taken on another buffer pool
		// are not read as the default's.
		fmt.Printf("# PostgreSQL started with %s\n", strings.Join(pgSettings, " "))
	}
	bench.Print(os.Stdout, results)
	return 0
}
