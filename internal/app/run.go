package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/cycle"
	"github.com/watchdogd/watchdogd/internal/deliver"
	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/logline"
	"github.com/watchdogd/watchdogd/internal/metrics"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/nudge"
	"github.com/watchdogd/watchdogd/internal/outlets"
	"github.com/watchdogd/watchdogd/internal/slack"
)

// deps are a cycle's connections, closed together.
type deps struct {
	reader *kandev.Reader
	store  *ledger.Store
}

func (d deps) Close() {
	if d.reader != nil {
		_ = d.reader.Close()
	}
	if d.store != nil {
		_ = d.store.Close()
	}
}

// newCycle connects everything a cycle needs.
func newCycle(ctx context.Context, opts Options, cfg *config.Config, log *zap.Logger, m *metrics.Metrics) (*cycle.Cycle, deps, error) {
	var d deps
	src, err := readSources(opts, cfg)
	if err != nil {
		return nil, d, err
	}
	warnCleartext(log, cfg, src)
	if d.reader, err = kandev.Open(ctx, src.database, cycle.ReaderOptions(cfg, opts.now)); err != nil {
		return nil, d, err
	}
	if d.store, err = ledger.Open(ctx, src.state); err != nil {
		d.Close()
		return nil, d, err
	}
	c := &cycle.Cycle{Config: cfg, Reader: d.reader, Store: d.store, Log: log, Metrics: m, Now: opts.now, Holder: holder()}
	if c.Outlets, err = connect(cfg, src, log, c); err != nil {
		d.Close()
		return nil, d, err
	}
	return c, d, nil
}

// connect builds how each kind of action goes out, for a config and its
// secrets, for cycle c: kandev's nudges, the log, and Slack when the config
// has a slack: block.
func connect(cfg *config.Config, src sources, log *zap.Logger, c *cycle.Cycle) (deliver.Registry, error) {
	kc, err := kandev.NewClient(cfg.Kandev.BaseURL, src.kandev, 15*time.Second)
	if err != nil {
		return nil, err
	}
	n := &nudge.Outlet{Kandev: kc, Current: c.Current,
		Read: func(ctx context.Context, taskID string) (*model.Snapshot, error) {
			return c.Reader.TaskSnapshot(ctx, taskID)
		}}
	var s *slack.Outlet
	if cfg.Slack != nil {
		if src.slack == "" {
			return nil, fmt.Errorf("slack: no bot token (slack.token_file is empty and WATCHDOGD_SLACK_TOKEN is unset)")
		}
		s = &slack.Outlet{Client: slack.NewClient(src.slack, cfg.Slack.APIURL, cfg.Slack.Timeout), Log: log}
	}
	return outlets.Register(s, n, &logline.Outlet{Log: log}), nil
}

// renderer is a cycle that only renders actions as cfg's outlets do (an
// operator's decision, frozen for the daemon to deliver).
func renderer(cfg *config.Config) *cycle.Cycle {
	var s *slack.Outlet
	if cfg.Slack != nil {
		s = &slack.Outlet{}
	}
	return &cycle.Cycle{Config: cfg, Outlets: outlets.Register(s, &nudge.Outlet{}, &logline.Outlet{}), Log: zap.NewNop()}
}

func holder() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), uuid.NewString()[:8])
}

// newLogger builds zap: JSON by default, console on a terminal; stable keys.
func newLogger(cfg config.Log, w io.Writer) (*zap.Logger, error) {
	l, _, err := newLeveledLogger(cfg, w)
	return l, err
}

// newLeveledLogger also returns the level, which a reload can change.
func newLeveledLogger(cfg config.Log, w io.Writer) (*zap.Logger, zap.AtomicLevel, error) {
	level := zap.NewAtomicLevel()
	if err := level.UnmarshalText([]byte(cfg.Level)); err != nil {
		return nil, level, fmt.Errorf("log.level: %w", err)
	}
	terminal := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			terminal = true
		}
	}
	format := cfg.Format
	if format == "" {
		format = "json"
		if terminal {
			format = "console"
		}
	}
	ec := zap.NewProductionEncoderConfig()
	ec.TimeKey, ec.EncodeTime = "ts", zapcore.ISO8601TimeEncoder
	ec.MessageKey = "msg"
	enc := zapcore.NewJSONEncoder(ec)
	if format == "console" {
		ec.EncodeLevel = zapcore.CapitalLevelEncoder
		if terminal {
			ec.EncodeLevel = zapcore.CapitalColorLevelEncoder
		}
		enc = zapcore.NewConsoleEncoder(ec)
	}
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(w), level)), level, nil
}

// runOnce is `watchdogd run --once`: one full cycle, then exit.
func runOnce(ctx context.Context, opts Options) error {
	cfg, err := loadConfig(opts)
	if err != nil {
		return err
	}
	log, err := newLogger(cfg.Log, opts.Stderr)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	if cfg.Slack == nil {
		log.Warn("no slack: block in the config; Slack steps are written to the log instead")
	}
	c, d, err := newCycle(ctx, opts, cfg, log, metrics.New(prometheus.NewRegistry(), opts.Version))
	if err != nil {
		return err
	}
	defer d.Close()
	cctx, cancel := context.WithTimeout(ctx, cfg.CycleTimeout)
	defer cancel()
	if opts.DryRun {
		return c.DryRun(cctx, opts.Stdout)
	}
	if cfg.HA.Enabled {
		k := &leaseKeeper{store: func() *ledger.Store { return d.store }, holder: c.Holder, ttl: cfg.HA.LeaseTTL, log: log}
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
