package main

import (
	"context"
	"fmt"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/watchdogd/watchdogd/internal/app"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/slack"
	"github.com/watchdogd/watchdogd/internal/policy"
)

// notifyTestCmd is `watchdogd notify-test`: it posts one test message
// through the configured route, to prove the token and the channel.
type notifyTestCmd struct {
	configFlag
	workspace string
}

func (c *notifyTestCmd) define(k *kingpin.CmdClause) {
	c.configFlag.define(k, "config file (YAML): its slack: block")
	k.Flag("workspace", "route as an episode of this workspace would be").PlaceHolder("ID").StringVar(&c.workspace)
}

func (c *notifyTestCmd) check(e proc) error {
	return c.resolve(e)
}

func (c *notifyTestCmd) run(ctx context.Context, e proc) error {
	cfg, err := app.LoadConfig(inputs(c.config, "", e))
	if err != nil {
		return err
	}
	if cfg.Slack == nil {
		return fmt.Errorf("no slack: block in the config")
	}
	tok, err := app.Secret(e.getenv, "WATCHDOGD_SLACK_TOKEN", cfg.Slack.TokenFile)
	if err != nil {
		return fmt.Errorf("slack.token_file: %w", err)
	}
	if tok == "" {
		// The config requires a source; an empty one would reach Slack
		// as not_authed, which names neither.
		return fmt.Errorf("no Slack bot token: $WATCHDOGD_SLACK_TOKEN is unset and slack.token_file %s is empty; "+
			"give the app's Bot User OAuth Token (xoxb-…) in one of them", cfg.Slack.TokenFile)
	}
	channel, _ := policy.Route(*cfg.Routing(), model.Episode{WorkspaceID: c.workspace})
	if channel == "" {
		return fmt.Errorf("no Slack route for workspace %q and no slack.default_channel", c.workspace)
	}
	s := slack.NewClient(tok, cfg.Slack.APIURL, cfg.Slack.Timeout)
	ts, err := s.Test(ctx, channel, fmt.Sprintf("watchdogd notify-test at %s: this channel receives watchdogd's alerts.", time.Now().UTC().Format(time.RFC3339)))
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(e.stdout, "posted to %s (ts %s)\n", channel, ts); err != nil {
		return err
	}
	// A delivery whose answer was lost is settled by looking for it in the
	// channel's history; without that scope it could neither be found nor
	// safely re-posted.
	if err := s.ReadHistory(ctx, channel); err != nil {
		return fmt.Errorf("the bot cannot read the channel's history, which settling an interrupted delivery needs (scopes channels:history, groups:history for private channels): %w", err)
	}
	if _, err = fmt.Fprintf(e.stdout, "read %s's history: ok\n", channel); err != nil {
		return err
	}
	return checkClicks(ctx, cfg, tok, e.getenv, e.stdout)
}
