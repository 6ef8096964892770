package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/alecthomas/kingpin/v2"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/notify/webhook"
	"github.com/watchdogd/watchdogd/internal/term"
)

// checkConfigCmd is `watchdogd check-config FILE…`: it checks each file: SUCCESS, or FAILED with every problem as
// file:line: field: problem. Given no file it checks the config the
// daemon would find (findConfig). Secret sources must be configured; the files
// they name need not exist here (CI checks a chart's config), but each one
// the daemon would read and this process could not is named after SUCCESS,
// "not read: FILE (FIELD: why)": the daemon stops at start on it.
type checkConfigCmd struct{ files []string }

func (c *checkConfigCmd) define(k *kingpin.CmdClause) {
	k.Arg("file", "config files; none: $WATCHDOGD_CONFIG, else "+imageConfig+" where it exists").StringsVar(&c.files)
}

func (c *checkConfigCmd) check(e proc) error {
	if len(c.files) == 0 {
		if f := findConfig(e.getenv, e.exists); f != "" {
			c.files = []string{f}
		}
	}
	if len(c.files) == 0 {
		return usageError("needs at least one file: watchdogd check-config FILE… (or $WATCHDOGD_CONFIG, or " + imageConfig + ")")
	}
	return nil
}

func (c *checkConfigCmd) run(_ context.Context, e proc) error {
	failed := false
	for _, f := range c.files {
		cfg, err := config.Load(f, e.getenv)
		var p *config.Problems
		switch {
		case err == nil:
			fmt.Fprintf(e.stdout, "SUCCESS: %s\n", f)
			for _, u := range unreadFiles(e.getenv, "", cfg, os.ReadFile) {
				fmt.Fprintf(e.stdout, "not read: %s\n", u)
			}
			for _, n := range cfg.Notes() {
				fmt.Fprintf(e.stdout, "note: %s\n", n)
			}
			for _, w := range cfg.Warnings() {
				fmt.Fprintf(e.stdout, "warning: %s\n", w)
			}
		case errors.As(err, &p):
			failed = true
			for _, line := range p.Lines() {
				fmt.Fprintf(e.stdout, "FAILED: %s\n", line)
			}
		default:
			failed = true
			fmt.Fprintf(e.stdout, "FAILED: %s: %s\n", f, term.OneLine(err))
		}
	}
	if failed {
		return silentFailure{}
	}
	return nil
}

// unreadFiles names the files cfg points at that the daemon would read (a
// flag (databaseURL) or the environment wins over a file, as in
// app.ReadSources) and read cannot — or, for a webhook's secret, that hold
// no Standard Webhooks secret — each as "FILE (FIELD: why)".
func unreadFiles(getenv func(string) string, databaseURL string, cfg *config.Config, read func(string) ([]byte, error)) []string {
	isSet := func(k string) bool { return getenv(k) != "" }
	files := []struct {
		field, path string
		used        bool
	}{
		{"database.url_file", cfg.Database.URLFile, databaseURL == "" && !isSet("WATCHDOGD_DATABASE_URL") && cfg.Database.URL == ""},
		{"state.url_file", cfg.State.URLFile, true},
		{"kandev.token_file", cfg.Kandev.TokenFile, !isSet("WATCHDOGD_KANDEV_TOKEN")},
		{"slack.token_file", slackTokenFile(cfg), !isSet("WATCHDOGD_SLACK_TOKEN")},
		{"http.web_config_file", cfg.HTTP.WebConfigFile, true},
	}
	for _, f := range cfg.OutletFiles() {
		files = append(files, struct {
			field, path string
			used        bool
		}{f[0], f[1], true})
	}
	if in := interactivity(cfg); in != nil {
		files = append(files, []struct {
			field, path string
			used        bool
		}{
			{"slack.interactivity.app_token_file", in.AppTokenFile, in.Mode == config.ModeSocket && !isSet("WATCHDOGD_SLACK_APP_TOKEN")},
			{"slack.interactivity.signing_secret_file", in.SigningSecretFile, in.Mode == config.ModeHTTP && !isSet("WATCHDOGD_SLACK_SIGNING_SECRET")},
		}...)
	}
	var out []string
	for _, f := range files {
		if f.path == "" || !f.used {
			continue
		}
		b, err := read(f.path)
		if err == nil && strings.HasPrefix(f.field, "webhooks[") {
			_, err = webhook.ParseSecret(config.Secret(b))
		}
		if err != nil {
			why := err
			var pe *fs.PathError
			if errors.As(err, &pe) {
				why = pe.Err // the path is named already
			}
			out = append(out, fmt.Sprintf("%s (%s: %s)", f.path, f.field, term.OneLine(why)))
		}
	}
	return out
}

// interactivity is cfg's slack.interactivity, nil when there is none.
func interactivity(cfg *config.Config) *config.Interactivity {
	if cfg.Slack == nil {
		return nil
	}
	return cfg.Slack.Interactivity
}

func slackTokenFile(cfg *config.Config) string {
	if cfg.Slack == nil {
		return ""
	}
	return cfg.Slack.TokenFile
}
