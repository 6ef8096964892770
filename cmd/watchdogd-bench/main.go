// Command watchdogd-bench measures watchdogd's scan against the floor and a
// naive per-session watchdog, on SQLite and PostgreSQL, at three sizes
// (make bench; make bench-quick runs the small size only).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/watchdogd/watchdogd/internal/bench"
	"github.com/watchdogd/watchdogd/internal/pgtest"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// options is the command line, checked: a mistake in it is reported before
// any dataset is generated or server started.
type options struct {
	sizes      []bench.Size
	runs       int
	cache      string
	binary     string
	explain    string
	rtt        time.Duration
	pgSettings []string
}

func run(args []string, stdout, stderr io.Writer) int {
	opts, code, ok := parseArgs(args, stdout, stderr)
	if !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := measure(ctx, opts, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "watchdogd-bench:", err)
		return 1
	}
	return 0
}

// parseArgs turns the command line into options. On a usage problem it
// prints one line (or the help that was asked for) and returns ok=false
// with the exit code: 2 for a mistake, 0 for -h.
func parseArgs(args []string, stdout, stderr io.Writer) (options, int, bool) {
	var o options
	fs := flag.NewFlagSet("watchdogd-bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	sizes := fs.String("sizes", "small,medium,large", "comma-separated: small, medium, large")
	fs.IntVar(&o.runs, "runs", 5, "measured runs per figure (the median is reported)")
	fs.StringVar(&o.cache, "cache", ".cache/bench", "where generated SQLite datasets are kept")
	fs.StringVar(&o.binary, "binary", "bin/watchdogd", "watchdogd binary for the peak-RSS measurement (empty: skip)")
	fs.StringVar(&o.explain, "explain", "", "write the scan statements' plans at the largest size to this file")
	fs.DurationVar(&o.rtt, "rtt", time.Millisecond, "also measure the scan and the naive loop on PostgreSQL through a link adding this round-trip time (0: skip)")
	fs.Func("pg-set", "a setting of the PostgreSQL server the run starts, name=value (repeatable), e.g. shared_buffers=4GB", func(kv string) error {
		if err := pgtest.CheckSetting(kv); err != nil {
			return err
		}
		o.pgSettings = append(o.pgSettings, kv)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "Usage of watchdogd-bench:")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return o, 0, false
		}
		fmt.Fprintf(stderr, "watchdogd-bench: %v (see watchdogd-bench -h)\n", err)
		return o, 2, false
	}
	usage := func(format string, a ...any) (options, int, bool) {
		fmt.Fprintf(stderr, "watchdogd-bench: "+format+"\n", a...)
		return o, 2, false
	}
	if fs.NArg() > 0 {
		return usage("unexpected argument %q", strings.Join(fs.Args(), " "))
	}
	if o.runs < 1 {
		return usage("-runs %d: want at least 1", o.runs)
	}
	if o.rtt < 0 {
		return usage("-rtt %v: want 0 (skip) or more", o.rtt)
	}
	for _, name := range strings.Split(*sizes, ",") {
		size, ok := findSize(strings.TrimSpace(name))
		if !ok {
			return usage("unknown size %q, want small, medium or large", name)
		}
		o.sizes = append(o.sizes, size)
	}
	return o, 0, true
}

func findSize(name string) (bench.Size, bool) {
	for _, s := range bench.Sizes {
		if s.Name == name {
			return s, true
		}
	}
	return bench.Size{}, false
}

// measure starts the PostgreSQL server, runs the benchmark and prints its
// table on stdout (progress goes to stderr).
func measure(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	cfg := bench.Config{Sizes: o.sizes, Runs: o.runs, CacheDir: o.cache, Binary: o.binary, Log: stderr,
		Now: time.Now().Truncate(time.Hour), RTT: o.rtt}
	if o.explain != "" {
		f, err := os.Create(o.explain)
		if err != nil {
			return fmt.Errorf("plans file: %w", err)
		}
		defer func() {
			if cerr := f.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("plans file: %w", cerr)
			}
		}()
		cfg.Explain = f
	}
	srv, err := pgtest.StartWith(o.pgSettings...)
	if err != nil {
		return err
	}
	defer srv.Close()
	cfg.PG = srv
	results, err := bench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if len(o.pgSettings) > 0 {
		// With the table, so that figures taken on another buffer pool
		// are not read as the default's.
		fmt.Fprintf(stdout, "# PostgreSQL started with %s\n", strings.Join(o.pgSettings, " "))
	}
	bench.Print(stdout, results)
	return nil
}
