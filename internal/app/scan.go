package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/cycle"
	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// loadConfig reads --config, or the defaults when none is given.
func loadConfig(opts Options) (*config.Config, error) {
	if opts.ConfigFile == "" {
		return config.Default(), nil
	}
	return config.Load(opts.ConfigFile, opts.Getenv)
}

// databaseURL resolves kandev's database: flag > env > file > kandev's own
// default location.
func databaseURL(opts Options, cfg *config.Config) (string, error) {
	switch {
	case opts.DatabaseURL != "":
		return opts.DatabaseURL, nil
	case opts.Getenv("WATCHDOGD_DATABASE_URL") != "":
		return opts.Getenv("WATCHDOGD_DATABASE_URL"), nil
	case cfg.Database.URL != "":
		return cfg.Database.URL, nil
	case cfg.Database.URLFile != "":
		b, err := os.ReadFile(cfg.Database.URLFile)
		if err != nil {
			return "", fmt.Errorf("database.url_file: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return kandev.DefaultURL(opts.Getenv), nil
}

// runScan reads kandev once and prints the report; no ledger, no sending.
func runScan(ctx context.Context, opts Options) error {
	if opts.Output != "table" && opts.Output != "json" {
		return usageError(fmt.Sprintf("--output %q: want table or json", opts.Output))
	}
	cfg, err := loadConfig(opts)
	if err != nil {
		return err
	}
	url, err := databaseURL(opts, cfg)
	if err != nil {
		return err
	}
	rep, snap, err := scanOnce(ctx, url, cfg, opts.now())
	if err != nil {
		return err
	}
	if err := printReport(opts.Stdout, opts.Output, rep); err != nil {
		return err
	}
	cycle.NoteBadRows(opts.Stderr, snap)
	return nil
}

// scanOnce opens kandev's database, takes one snapshot within
// database.scan_timeout, and builds the report.
func scanOnce(ctx context.Context, url string, cfg *config.Config, now time.Time) (scan.Report, *model.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Database.ScanTimeout)
	defer cancel()
	r, err := kandev.Open(ctx, url, cycle.ReaderOptions(cfg, func() time.Time { return now }))
	if err != nil {
		return scan.Report{}, nil, err
	}
	defer func() { _ = r.Close() }()
	snap, err := r.Snapshot(ctx)
	if err != nil {
		return scan.Report{}, nil, err
	}
	return cycle.Findings(snap, cfg, now), snap, nil
}

func printReport(w io.Writer, format string, rep scan.Report) error {
	if format == "json" {
		return scan.WriteJSON(w, rep)
	}
	return scan.WriteTable(w, rep)
}
