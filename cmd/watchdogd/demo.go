package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/watchdogd/watchdogd/internal/app"
	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/cycle"
	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/metrics"
	"github.com/watchdogd/watchdogd/internal/notify/console"
	"github.com/watchdogd/watchdogd/internal/notify/nudge"
	"github.com/watchdogd/watchdogd/internal/notify/slack"
)

// demoCmd is `watchdogd demo`: it builds a kandev-shaped SQLite database in a temporary directory
// holding one session per finding kind plus healthy ones, runs one cycle with
// the console notifier standing in for Slack and kandev, and prints the
// report and what watchdogd would send. With --keep DIR the database stays
// in DIR beside a config that runs the daemon on it (keepDemo); the
// demo's own ledger is always temporary, so that the daemon's first cycle
// opens every episode afresh.
func (c *demoCmd) run(ctx context.Context, e proc) error {
	dir, err := os.MkdirTemp("", "watchdogd-demo-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	dbDir := dir
	if c.keep != "" {
		if dbDir, err = keepDir(c.keep); err != nil {
			return err
		}
	}
	now := e.now()
	kandevURL, err := demoDatabase(ctx, filepath.Join(dbDir, "kandev.db"), now)
	if err != nil {
		return err
	}
	cfg, err := app.LoadConfig(inputs(c.config, "", e))
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
	log, err := app.NewLogger(inputs(c.config, "", e).LogConfig(config.Log{Level: "error", Format: "console"}), e.stderr)
	if err != nil {
		return err
	}
	// Every outlet renders as itself and prints what it would send.
	m := metrics.New(prometheus.NewRegistry(), e.version)
	var s *slack.Outlet
	if cfg.Slack != nil {
		s = app.SlackOutlet(cfg, nil, m)
	}
	reg, err := app.Outlets(cfg, s, &nudge.Outlet{})
	if err != nil {
		return err
	}
	printing := console.New(&sent, reg).Outlets()
	cy := &cycle.Cycle{Config: cfg, Reader: reader, Store: store, Outlets: printing, Log: log,
		Metrics: m, Now: func() time.Time { return now }, Holder: "demo"}
	res, err := cy.Run(ctx)
	if err != nil {
		return err
	}
	if c.output == "table" {
		where := "removed on exit"
		if c.keep != "" {
			where = "kept in " + dbDir
		}
		fmt.Fprintf(e.stdout, "Demo kandev database with %d active sessions (%s).\n\n", len(res.Report.Sessions), where)
	}
	if err := printReport(e.stdout, c.output, res.Report); err != nil {
		return err
	}
	if c.output == "table" {
		fmt.Fprintf(e.stdout, "\nWhat watchdogd would send on its first cycle (%d episodes opened):\n\n%s", len(res.Plan.Open), sent.String())
	}
	_ = log.Sync()
	if c.keep != "" {
		return keepDemo(e, c.keep, dbDir, c.output == "table")
	}
	return nil
}

type demoCmd struct {
	outputFlag
	config, keep string
}

// define declares demo's flags. Its --config is only ever the one given:
// the demo makes its own database and ledger, and the image, which sets
// $WATCHDOGD_CONFIG, runs it with no config mounted.
func (c *demoCmd) define(k *kingpin.CmdClause) {
	k.Flag("config", "config file (YAML) for the demo's cycle (only when given: the demo has its own database and ledger)").
		PlaceHolder("FILE").StringVar(&c.config)
	c.outputFlag.define(k)
	k.Flag("keep", "keep the demo database in this directory, with a watchdogd.yaml that runs the daemon on it").PlaceHolder("DIR").StringVar(&c.keep)
}

func (c *demoCmd) check(proc) error { return c.outputFlag.check() }

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
