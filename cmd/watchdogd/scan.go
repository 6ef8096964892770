package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/watchdogd/watchdogd/internal/app"
	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/cycle"
	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// scanCmd is `watchdogd scan`: read kandev once and print the findings; no
// ledger, no sending.
type scanCmd struct {
	configFlag
	outputFlag
	databaseURL, nowFlag string
	now                  time.Time // zero: the clock
}

func (c *scanCmd) define(k *kingpin.CmdClause) {
	c.configFlag.define(k, "config file (YAML)")
	k.Flag("database-url", "kandev's database: sqlite:///abs/path.db, sqlite://rel.db or postgres://... (over WATCHDOGD_DATABASE_URL and the config)").
		PlaceHolder("URL").StringVar(&c.databaseURL)
	k.Flag("now", "measure ages at this RFC 3339 instant instead of the clock").PlaceHolder("RFC3339").StringVar(&c.nowFlag)
	c.outputFlag.define(k)
}

func (c *scanCmd) check(e proc) error {
	if err := c.resolve(e); err != nil {
		return err
	}
	if c.nowFlag != "" {
		t, err := time.Parse(time.RFC3339Nano, c.nowFlag)
		if err != nil {
			return usageError(fmt.Sprintf("--now %q is not an RFC 3339 time", c.nowFlag))
		}
		c.now = t
	}
	return c.outputFlag.check()
}

func (c *scanCmd) run(ctx context.Context, e proc) error {
	in := inputs(c.config, c.databaseURL, e)
	cfg, err := app.LoadConfig(in)
	if err != nil {
		return err
	}
	url, err := app.DatabaseURL(in, cfg)
	if err != nil {
		return err
	}
	now := e.now()
	if !c.now.IsZero() {
		now = c.now
	}
	rep, snap, err := scanOnce(ctx, url, cfg, now)
	if err != nil {
		return app.FromError(err, app.DatabaseFrom(in, cfg))
	}
	if err := printReport(e.stdout, c.output, rep); err != nil {
		return err
	}
	cycle.NoteBadRows(e.stderr, snap)
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
