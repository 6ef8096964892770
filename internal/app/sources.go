package app

import (
	"fmt"
	"os"
	"strings"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/term"
)

// sources are the values the config points at rather than holds: the two
// databases' URLs and the two tokens, each from a flag, the environment or
// a file. The daemon reads them again before every cycle, so a rotated
// secret takes effect without a restart or SIGHUP: a Kubernetes Secret
// (or an external-secrets operator behind it) replaces its mounted files
// in place, and an old token that is revoked while watchdogd still sends
// it turns every step into a permanent failure. Prometheus and Alertmanager
// read their credential files per request for the same reason.
type sources struct {
	database string
	state    string
	slack    config.Secret // empty without a slack: block
	kandev   config.Secret
}

// readSources resolves every source for cfg.
func readSources(opts Options, cfg *config.Config) (sources, error) {
	var s sources
	var err error
	if s.database, err = databaseURL(opts, cfg); err != nil {
		return s, err
	}
	if s.state, err = stateURL(cfg); err != nil {
		return s, err
	}
	if s.kandev, err = secret(opts.Getenv, "WATCHDOGD_KANDEV_TOKEN", cfg.Kandev.TokenFile); err != nil {
		return s, fmt.Errorf("kandev.token_file: %w", err)
	}
	if cfg.Slack != nil {
		if s.slack, err = secret(opts.Getenv, "WATCHDOGD_SLACK_TOKEN", cfg.Slack.TokenFile); err != nil {
			return s, fmt.Errorf("slack.token_file: %w", err)
		}
	}
	return s, nil
}

// changed names what differs from o, for a log line that must never carry
// the values themselves.
func (s sources) changed(o sources) []string {
	var names []string
	if s.database != o.database {
		names = append(names, "database URL")
	}
	if s.state != o.state {
		names = append(names, "state URL")
	}
	if s.slack != o.slack {
		names = append(names, "slack token")
	}
	if s.kandev != o.kandev {
		names = append(names, "kandev token")
	}
	return names
}

// secret reads a token: the environment variable wins over the file.
func secret(getenv func(string) string, env, file string) (config.Secret, error) {
	if v := getenv(env); v != "" {
		return config.Secret(strings.TrimSpace(v)), nil
	}
	if file == "" {
		return "", nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("read secret file: %w", err)
	}
	return config.Secret(strings.TrimSpace(string(b))), nil
}

// stateURL resolves the ledger's URL: state.url_file, else state.url.
func stateURL(cfg *config.Config) (string, error) {
	if cfg.State.URLFile != "" {
		b, err := os.ReadFile(cfg.State.URLFile)
		if err != nil {
			return "", fmt.Errorf("state.url_file: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return cfg.State.URL, nil
}

// refresh reads the sources again before a cycle and, when one changed,
// rebuilds the cycle on the new values. A source that cannot be read keeps
// the values in use, logged once per error: a rotation caught half-way
// (a file briefly missing) must not stop the watchdog, and the old token
// may well still work.
func (d *daemon) refresh(cfg *config.Config) {
	src, err := readSources(d.opts, cfg)
	if err == nil {
		changed := d.src.changed(src)
		if len(changed) == 0 {
			d.srcErr = ""
			return
		}
		if err = d.install(cfg, src); err == nil {
			d.srcErr = ""
			d.log.Info("a secret or URL file changed; the next steps use its new content", zap.Strings("changed", changed))
			return
		}
	}
	if msg := term.OneLine(err); msg != d.srcErr {
		d.srcErr = msg
		d.log.Warn("cannot read a secret or URL file again; still using the values read before", zap.String("err", msg))
	}
}
