package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/watchdogd/watchdogd/internal/app"
	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/interact"
)

// checkClicks is notify-test's part for slack.interactivity: in Socket
// Mode, that the app-level token is one and Slack opens a connection with
// it; in the HTTP mode, that the signing secret can be read.
func checkClicks(ctx context.Context, cfg *config.Config, bot config.Secret, getenv func(string) string, w io.Writer) error {
	in := cfg.Slack.Interactivity
	if in == nil {
		return nil
	}
	if in.Mode == config.ModeHTTP {
		s, err := app.Secret(getenv, "WATCHDOGD_SLACK_SIGNING_SECRET", in.SigningSecretFile)
		if err != nil {
			return fmt.Errorf("slack.interactivity.signing_secret_file: %w", err)
		}
		if s == "" {
			return fmt.Errorf("slack.interactivity.signing_secret_file: no signing secret to check Slack's requests with")
		}
		_, err = fmt.Fprintf(w, "signing secret: read; Slack's Interactivity Request URL must reach %s%s\n", in.Listen, interact.Path)
		return err
	}
	tok, err := app.Secret(getenv, "WATCHDOGD_SLACK_APP_TOKEN", in.AppTokenFile)
	if err != nil {
		return fmt.Errorf("slack.interactivity.app_token_file: %w", err)
	}
	if !strings.HasPrefix(tok.Reveal(), "xapp-") {
		return fmt.Errorf("slack.interactivity.app_token_file: not an app-level token (xapp-…; Basic Information, App-Level Tokens, scope connections:write)")
	}
	if err := interact.Check(ctx, interact.SocketAPI(bot, tok, cfg.Slack.APIURL)); err != nil {
		return fmt.Errorf("the app-level token cannot open Socket Mode (is Socket Mode on, and the token's scope connections:write?): %w", err)
	}
	_, err = fmt.Fprintln(w, "Socket Mode: connected with the app-level token: ok")
	return err
}
