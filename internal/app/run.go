package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/cycle"
	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/metrics"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/notify/alertmanager"
	"github.com/watchdogd/watchdogd/internal/notify/kandevapi"
	"github.com/watchdogd/watchdogd/internal/notify/logline"
	"github.com/watchdogd/watchdogd/internal/notify/nudge"
	"github.com/watchdogd/watchdogd/internal/notify/registry"
	"github.com/watchdogd/watchdogd/internal/notify/slack"
	"github.com/watchdogd/watchdogd/internal/notify/webhook"
)

// Deps are a cycle's connections, closed together.
type Deps struct {
	Reader *kandev.Reader
	Store  *ledger.Store
}

// Close closes what is open.
func (d Deps) Close() {
	if d.Reader != nil {
		_ = d.Reader.Close()
	}
	if d.Store != nil {
		_ = d.Store.Close()
	}
}

// NewCycle connects everything one cycle needs (`run --once`): kandev's
// database read at now, the ledger, the outlets. A dry run's SQLite ledger
// is a copy (ledger.OpenCopy), so that it neither makes nor writes one.
func NewCycle(ctx context.Context, in Inputs, cfg *config.Config, log *zap.Logger, m *metrics.Metrics, now func() time.Time, dryRun bool) (*cycle.Cycle, Deps, error) {
	var d Deps
	src, err := ReadSources(in, cfg)
	if err != nil {
		return nil, d, err
	}
	WarnCleartext(log, cfg, src)
	if d.Reader, err = kandev.Open(ctx, src.Database, cycle.ReaderOptions(cfg, now)); err != nil {
		return nil, d, FromError(err, src.DatabaseFrom)
	}
	switch {
	case dryRun:
		d.Store, err = ledger.OpenCopy(ctx, src.State)
	case ledger.CheckPath(src.State) != nil:
		err = ledger.CheckPath(src.State)
	default:
		d.Store, err = ledger.Open(ctx, src.State)
	}
	if err != nil {
		d.Close()
		return nil, d, FromError(err, src.StateFrom)
	}
	c := &cycle.Cycle{Config: cfg, Reader: d.Reader, Store: d.Store, Log: log, Metrics: m, Now: now, Holder: Holder()}
	if c.Outlets, err = Connect(cfg, src, log, c); err != nil {
		d.Close()
		return nil, d, err
	}
	return c, d, nil
}

// Connect builds how each kind of action goes out, for a config and its
// secrets, for cycle c: kandev's nudges, the log, and Slack, Alertmanager
// and webhooks when the config has their blocks.
func Connect(cfg *config.Config, src Sources, log *zap.Logger, c *cycle.Cycle) (notify.Registry, error) {
	kc, err := kandevapi.NewClient(cfg.Kandev.BaseURL, src.Kandev, cfg.Kandev.Timeout)
	if err != nil {
		return nil, err
	}
	n := &nudge.Outlet{Kandev: kc, Current: c.Current, Read: c.ReadTask}
	var s *slack.Outlet
	if cfg.Slack != nil {
		if src.Slack == "" {
			return nil, fmt.Errorf("slack: no bot token (slack.token_file is empty and WATCHDOGD_SLACK_TOKEN is unset)")
		}
		s = SlackOutlet(cfg, slack.NewClient(src.Slack, cfg.Slack.APIURL, cfg.Slack.Timeout), c.Metrics)
	}
	reg, err := Outlets(cfg, s, n)
	if err != nil {
		return nil, err
	}
	if err := checkOutlets(reg); err != nil {
		return nil, err
	}
	if s != nil && cfg.Slack.Interactivity != nil {
		connectClicks(reg, cfg, c, s, kc, n)
	}
	return reg, nil
}

// checker is an outlet that can tell at start that it could not send (a
// webhook's secret it cannot sign with): the daemon then refuses to start,
// or a reload is refused, rather than fail every send.
type checker interface{ Check() error }

// checkOutlets checks each registered outlet that can be checked.
func checkOutlets(reg notify.Registry) error {
	for _, kind := range model.ActionKinds {
		if c, ok := reg[kind].Outlet.(checker); ok {
			if err := c.Check(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Outlets registers cfg's outlets, with s as its Slack outlet (nil
// without a slack: block) and n as kandev's.
func Outlets(cfg *config.Config, s *slack.Outlet, n *nudge.Outlet) (notify.Registry, error) {
	set := registry.Set{Slack: s, Nudge: n, Log: &logline.Outlet{}}
	if cfg.Alertmanager != nil {
		am, err := alertmanager.New(cfg)
		if err != nil {
			return nil, err
		}
		set.Alertmanager = am
	}
	if len(cfg.Webhooks) > 0 {
		set.Webhook = webhook.New(cfg.Webhooks)
	}
	return registry.Register(set), nil
}

// SlackOutlet is the Slack outlet of cfg (which has a slack: block)
// through client, counting rate limits on m (nil: not counted).
func SlackOutlet(cfg *config.Config, client *slack.Client, m *metrics.Metrics) *slack.Outlet {
	s := &slack.Outlet{Client: client, Budget: func() int { return cfg.Slack.MaxMessagesPerCycle }, Interactive: cfg.Slack.Interactivity != nil}
	if m != nil {
		s.RateLimited = m.SlackLimited
	}
	return s
}

// Renderer is a cycle that only renders actions as cfg's outlets do (an
// operator's decision, frozen for the daemon to deliver).
func Renderer(cfg *config.Config) (*cycle.Cycle, error) {
	var s *slack.Outlet
	if cfg.Slack != nil {
		s = SlackOutlet(cfg, nil, nil)
	}
	reg, err := Outlets(cfg, s, &nudge.Outlet{})
	if err != nil {
		return nil, err
	}
	return &cycle.Cycle{Config: cfg, Outlets: reg, Log: zap.NewNop()}, nil
}

// Holder names this process in claims and leases: host, pid and a random
// part, so that a restart is another holder.
func Holder() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), uuid.NewString()[:8])
}

// NewLogger builds zap: JSON by default, console on a terminal; stable keys.
func NewLogger(cfg config.Log, w io.Writer) (*zap.Logger, error) {
	l, _, err := NewLeveledLogger(cfg, w)
	return l, err
}

// NewLeveledLogger also returns the level, which a reload can change.
func NewLeveledLogger(cfg config.Log, w io.Writer) (*zap.Logger, zap.AtomicLevel, error) {
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
