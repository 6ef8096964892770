package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/app"
	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/cycle"
	"github.com/watchdogd/watchdogd/internal/interact"
	"github.com/watchdogd/watchdogd/internal/notify/slack"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// clickRig is what a click is handled with: a cycle of its own on the
// open ledger (cycles run under mu; a click must not wait for one) and
// the Slack client of the bot token. It is rebuilt whole on reload.
type clickRig struct {
	cycle *cycle.Cycle
	slack *slack.Client
}

// How long a user group's members, as Slack listed them, decide who may
// act before Slack is asked again; and after Slack failed to answer.
const (
	groupsTTL   = 5 * time.Minute
	groupsRetry = 30 * time.Second
)

// armClicks builds the click rig for the config and sources in place, once
// the ledger is open (called under mu by install and ensureStore).
func (d *daemon) armClicks() {
	cfg, st := d.cfg.Load(), d.store.Load()
	if cfg == nil || cfg.Slack == nil || cfg.Slack.Interactivity == nil || st == nil {
		d.clicks.Store(nil)
		return
	}
	ck := &cycle.Cycle{Config: cfg, Reader: d.reader, Store: st, Log: d.log, Metrics: d.m, Now: time.Now, Holder: d.holder}
	if d.lease != nil {
		ck.MayAct = d.lease.Held
	}
	var err error
	if ck.Outlets, err = app.Connect(cfg, d.src, d.log, ck); err != nil {
		d.log.Warn("cannot build what clicks in Slack deliver through; clicks wait", zap.Error(err))
		d.clicks.Store(nil)
		return
	}
	d.clicks.Store(&clickRig{cycle: ck, slack: slack.NewClient(d.src.Slack, cfg.Slack.APIURL, cfg.Slack.Timeout)})
}

// rig is the click rig in place, or ErrNotReady.
func (d *daemon) rig() (*clickRig, error) {
	if r := d.clicks.Load(); r != nil {
		return r, nil
	}
	return nil, interact.ErrNotReady
}

// clickHandler is the one handler Socket Mode and the HTTP endpoint feed.
// Its user groups' members outlive reloads: Slack is asked through the
// rig in place.
func (d *daemon) clickHandler() *interact.Handler {
	groups := &interact.Groups{TTL: groupsTTL, Retry: groupsRetry, Now: time.Now,
		Fetch: func(ctx context.Context, g string) ([]string, error) {
			r, err := d.rig()
			if err != nil {
				return nil, err
			}
			return r.slack.UsergroupMembers(ctx, g)
		}}
	return &interact.Handler{
		Click: func(ctx context.Context, in cycle.ClickIn) (cycle.Clicked, error) {
			r, err := d.rig()
			if err != nil {
				return cycle.Clicked{}, err
			}
			return r.cycle.Click(ctx, in, groups.Members)
		},
		Deliver: func(ctx context.Context, keys []string) {
			if r, err := d.rig(); err == nil {
				r.cycle.DeliverClicks(ctx, keys)
			}
		},
		Form: func(ctx context.Context, id, user string) (scan.Finding, string, error) {
			r, err := d.rig()
			if err != nil {
				return scan.Finding{}, "", err
			}
			return r.cycle.FormFor(ctx, id, user, groups.Members)
		},
		Slack: rigSlack{d},
		Count: func(result string) { d.m.SlackInteractions.WithLabelValues(result).Inc() },
		Log:   d.log.With(zap.String("component", "slack_interactions")),
	}
}

// rigSlack speaks to Slack through the rig in place.
type rigSlack struct{ d *daemon }

func (s rigSlack) Ephemeral(ctx context.Context, channel, user, text string) error {
	r, err := s.d.rig()
	if err != nil {
		return err
	}
	return r.slack.Ephemeral(ctx, channel, user, text)
}

func (s rigSlack) OpenForm(ctx context.Context, trigger string, v slackapi.ModalViewRequest) error {
	r, err := s.d.rig()
	if err != nil {
		return err
	}
	return r.slack.OpenForm(ctx, trigger, v)
}

// receiveClicks starts receiving clicks as slack.interactivity says (a
// change of mode, listener or app token takes a restart), and returns
// what stops it: the HTTP mode's listener, or Socket Mode's receiver once
// the work context ends.
func (d *daemon) receiveClicks(work context.Context, cfg *config.Config) (shutdowner, error) {
	if cfg.Slack == nil || cfg.Slack.Interactivity == nil {
		return nil, nil
	}
	in := cfg.Slack.Interactivity
	h := d.clickHandler()
	h.Start(work)
	d.clickWork = h
	if in.Mode == config.ModeHTTP {
		secret := func() config.Secret {
			s, err := app.Secret(d.opts.Getenv, "WATCHDOGD_SLACK_SIGNING_SECRET", in.SigningSecretFile)
			if err != nil {
				d.log.Warn("cannot read the Slack signing secret; refusing Slack's requests", zap.Error(err))
			}
			return s
		}
		return (&interact.HTTP{Handler: h, Secret: secret, Now: time.Now, Shed: d.m.SlackRequestsShed.Inc}).Listen(in.Listen)
	}
	token, err := app.Secret(d.opts.Getenv, "WATCHDOGD_SLACK_APP_TOKEN", in.AppTokenFile)
	if err == nil && token == "" {
		err = errors.New("no app-level token for Socket Mode")
	}
	if err != nil {
		return nil, fmt.Errorf("slack.interactivity.app_token_file: %w", err)
	}
	sock := &interact.Socket{Handler: h, API: interact.SocketAPI(d.src.Slack, token, cfg.Slack.APIURL)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sock.Run(work)
	}()
	return untilDone(done), nil
}

// untilDone stops Socket Mode's receiver: it ends with the work context,
// having waited for the clicks it was saving, and Shutdown waits for that
// (or ctx), so that no click is still being saved when the handler's own
// wait and the ledger's close come after it.
type untilDone chan struct{}

func (u untilDone) Shutdown(ctx context.Context) error {
	select {
	case <-u:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("socket mode still receiving Slack clicks: %w", ctx.Err())
	}
}
