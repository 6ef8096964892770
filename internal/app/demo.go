package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/console"
	"github.com/watchdogd/watchdogd/internal/cycle"
	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/logline"
	"github.com/watchdogd/watchdogd/internal/metrics"
	"github.com/watchdogd/watchdogd/internal/nudge"
	"github.com/watchdogd/watchdogd/internal/outlets"
	"github.com/watchdogd/watchdogd/internal/slack"
)

// runDemo builds a kandev-shaped SQLite database in a temporary directory
// holding one session per finding kind plus healthy ones, runs one cycle with
// the console notifier standing in for Slack and kandev, and prints the
// report and what watchdogd would send.
func runDemo(ctx context.Context, opts Options) error {
	dir, err := os.MkdirTemp("", "watchdogd-demo-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	now := opts.now()
	kandevURL, err := demoDatabase(ctx, filepath.Join(dir, "kandev.db"), now)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(opts)
	if err != nil {
		return err
	}
	cfg.State.URL = "sqlite://" + filepath.Join(dir, "state.db")
	if cfg.Slack == nil {
		cfg.Slack = &config.Slack{DefaultChannel: "#kandev-alerts", MaxMessagesPerCycle: 100}
	}
	reader, err := kandev.Open(ctx, kandevURL, cycle.ReaderOptions(cfg, func() time.Time { return now }))
	if err != nil {
		return err
	}
	defer func() { _ = reader.Close() }()
	store, err := ledger.Open(ctx, cfg.State.URL)
	if err != nil {
		return err
	}
	defer func() { _ = store.Close() }()
	var sent bytes.Buffer
	log, err := newLogger(config.Log{Level: "error", Format: "console"}, opts.Stderr)
	if err != nil {
		return err
	}
	// Every outlet renders as itself and prints what it would send.
	printing := console.New(&sent).Wrap(outlets.Register(&slack.Outlet{}, &nudge.Outlet{}, &logline.Outlet{}))
	c := &cycle.Cycle{Config: cfg, Reader: reader, Store: store, Outlets: printing, Log: log,
		Metrics: metrics.New(prometheus.NewRegistry(), opts.Version), Now: func() time.Time { return now }, Holder: "demo"}
	res, err := c.Run(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.Stdout, "Demo kandev database with %d active sessions (removed on exit).\n\n", len(res.Report.Sessions))
	format := opts.Output
	if format == "" {
		format = "table"
	}
	if err := printReport(opts.Stdout, format, res.Report); err != nil {
		return err
	}
	if format == "table" {
		fmt.Fprintf(opts.Stdout, "\nWhat watchdogd would send on its first cycle (%d episodes opened):\n\n%s", len(res.Plan.Open), sent.String())
	}
	_ = log.Sync()
	return nil
}

// demoDatabase writes the demo's kandev database at path, its clock at now,
// and returns its URL.
func demoDatabase(ctx context.Context, path string, now time.Time) (string, error) {
	db, err := kandevdb.CreateSQLite(path, kandevdb.Options{})
	if err != nil {
		return "", err
	}
	if err := db.Write(ctx, kandevdb.Demo(now)); err != nil {
		_ = db.Close()
		return "", fmt.Errorf("build demo database: %w", err)
	}
	if err := db.Close(); err != nil {
		return "", fmt.Errorf("build demo database: %w", err)
	}
	return db.URL(), nil
}
