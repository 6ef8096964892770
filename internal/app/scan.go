package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
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

func scanOptions(cfg *config.Config) scan.Options {
	t := cfg.Thresholds
	return scan.Options{
		Thresholds: scan.Thresholds{StallAfter: t.StallAfter, NeverStartedAfter: t.NeverStartedAfter,
			ClarificationAfter: t.ClarificationAfter, PermissionAfter: t.PermissionAfter, InterruptedAfter: t.InterruptedAfter},
		KandevRule: cfg.Kandev.CurrentTurnRule,
		BaseURL:    cfg.Kandev.BaseURL,
	}
}

// findings derives the report from a snapshot taken at instant now. Every
// reading of kandev goes through it — the cycle, the fence before a
// delivery, scan — so that they agree.
func findings(snap *model.Snapshot, cfg *config.Config, now time.Time) scan.Report {
	return scan.Findings(snap, scanOptions(cfg), now)
}

// readerOptions are how kandev's database is read for cfg, with now the
// scan's clock: a timestamp more than thresholds.future_tolerance after
// it is read as missing.
func readerOptions(cfg *config.Config, now func() time.Time) kandev.Options {
	tolerance := cfg.Thresholds.FutureTolerance
	return kandev.Options{BusyTimeout: cfg.Database.BusyTimeout, NotAfter: func() time.Time { return now().Add(tolerance) }}
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
	noteBadRows(opts.Stderr, snap)
	return nil
}

// noteBadRows tells whoever runs scan by hand which rows were read only in
// part, as the daemon logs them: a session whose turn has no start, say,
// is missing from the table without one. Stderr keeps the JSON clean.
func noteBadRows(w io.Writer, snap *model.Snapshot) {
	for _, l := range []struct {
		rows []model.RowRef
		what string
	}{
		{snap.Malformed, "kandev itself cannot read (malformed metadata, read as no flags; or a NULL id)"},
		{snap.Unparseable, "with a timestamp in no shape kandev writes, read as missing"},
		{snap.Future, "with a timestamp more than thresholds.future_tolerance after the scan (kandev's database clock or time zone?), read as missing"},
	} {
		rows, _ := newRows(nil, l.rows) // each row once
		if len(rows) == 0 {
			continue
		}
		names := rowNames(rows)
		if len(rows) > maxLoggedRows {
			names = append(names, fmt.Sprintf("and %d more", len(rows)-maxLoggedRows))
		}
		fmt.Fprintf(w, "note: %d kandev row(s) %s: %s\n", len(rows), l.what, term.Escape(strings.Join(names, ", ")))
	}
}

// scanOnce opens kandev's database, takes one snapshot within
// database.scan_timeout, and builds the report.
func scanOnce(ctx context.Context, url string, cfg *config.Config, now time.Time) (scan.Report, *model.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Database.ScanTimeout)
	defer cancel()
	r, err := kandev.Open(ctx, url, readerOptions(cfg, func() time.Time { return now }))
	if err != nil {
		return scan.Report{}, nil, err
	}
	defer func() { _ = r.Close() }()
	snap, err := r.Snapshot(ctx)
	if err != nil {
		return scan.Report{}, nil, err
	}
	return findings(snap, cfg, now), snap, nil
}

func printReport(w io.Writer, format string, rep scan.Report) error {
	if format == "json" {
		return scan.WriteJSON(w, rep)
	}
	return scan.WriteTable(w, rep)
}
