package app

import (
	"context"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/cycle"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/notify/answer"
	"github.com/watchdogd/watchdogd/internal/notify/kandevapi"
	"github.com/watchdogd/watchdogd/internal/notify/nudge"
	"github.com/watchdogd/watchdogd/internal/notify/registry"
	"github.com/watchdogd/watchdogd/internal/notify/slack"
	"github.com/watchdogd/watchdogd/internal/notify/snooze"
	"github.com/watchdogd/watchdogd/internal/policy"
)

// connectClicks registers what a click in Slack decides (slack.interactivity): kandev's answers through kc, its
// API client (HTTP for a question, the WebSocket for a permission), snoozes and resolves in cycle c's ledger.
func connectClicks(reg notify.Registry, cfg *config.Config, c *cycle.Cycle, s *slack.Outlet, kc *kandevapi.Client, n *nudge.Outlet) {
	a := &answer.Outlet{Kandev: kc, Read: c.ReadTask, Current: c.Current}
	q := &snooze.Outlet{
		AddSilence: func(ctx context.Context, v ledger.Silence) error { return c.Store.AddSilence(ctx, v) },
		Resolve: func(ctx context.Context, id string, why model.Reason, at time.Time) error {
			_, _, err := c.Store.Decide(ctx, func(l model.Ledger) (model.Plan, error) {
				// No Routing: the click's story edits the message, not a
				// resolve's "cleared" line. The other outlets that heard of
				// the episode are told it ended, as when a finding clears.
				p, _ := policy.ForceResolve(l, id, policy.Input{Now: at, Policies: cfg.Policy, Resolves: c.Resolves(),
					Reason: func(model.Episode) model.Reason { return why }})
				return p, nil
			})
			return err
		},
	}
	registry.RegisterClicks(reg, s, n, a, q)
}
