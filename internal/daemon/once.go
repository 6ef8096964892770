package daemon

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/watchdogd/watchdogd/internal/app"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/metrics"
	"go.uber.org/zap"
)

// Once is `watchdogd run --once`: one full cycle, as the daemon runs on
// each tick, then exit; with dryRun, decide and print, and write and send
// nothing. now is the cycle's clock.
func Once(ctx context.Context, opts Options, dryRun bool, now func() time.Time) error {
	cfg, err := app.LoadConfig(opts.Inputs)
	if err != nil {
		return err
	}
	log, err := app.NewLogger(cfg.Log, opts.Stderr)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	if cfg.Slack == nil {
		log.Warn("no slack: block in the config; Slack steps are written to the log instead")
	}
	c, d, err := app.NewCycle(ctx, opts.Inputs, cfg, log, metrics.New(prometheus.NewRegistry(), opts.Version), now, dryRun)
	if err != nil {
		return err
	}
	defer d.Close()
	cctx, cancel := context.WithTimeout(ctx, cfg.CycleTimeout)
	defer cancel()
	if dryRun {
		return c.DryRun(cctx, opts.Stdout)
	}
	if cfg.HA.Enabled {
		k := &leaseKeeper{store: func() *ledger.Store { return d.Store }, holder: c.Holder, ttl: cfg.HA.LeaseTTL, log: log}
		k.Renew(cctx)
		if !k.Held() {
			log.Info("another replica holds the leader lease; skipping this run")
			return nil
		}
		defer k.Release(context.WithoutCancel(ctx))
		c.MayAct = k.Held
	}
	res, err := c.Run(cctx)
	if err != nil {
		return err
	}
	log.Info("cycle done", zap.Int("sessions", len(res.Report.Sessions)), zap.Int("findings", len(res.Report.Findings)),
		zap.Int("opened", len(res.Plan.Open)), zap.Int("resolved", len(res.Plan.Resolve)), zap.Any("actions", res.Counts))
	return nil
}
