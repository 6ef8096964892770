package app

import (
	"fmt"
	"os"
	"strings"

	"github.com/watchdogd/watchdogd/internal/config"
)

// Sources are the values the config points at rather than holds: the two
// databases' URLs and the two tokens, each from a flag, the environment or
// a file. The daemon reads them again before every cycle, so a rotated
// secret takes effect without a restart or SIGHUP: a Kubernetes Secret
// (or an external-secrets operator behind it) replaces its mounted files
// in place, and an old token that is revoked while watchdogd still sends
// it turns every step into a permanent failure. Prometheus and Alertmanager
// read their credential files per request for the same reason.
type Sources struct {
	Database string
	State    string
	// DatabaseFrom and StateFrom say where each URL came from (a flag,
	// the environment, a file and line), for the errors about them.
	DatabaseFrom, StateFrom string
	Slack                   config.Secret // empty without a slack: block
	Kandev                  config.Secret
}

// ReadSources resolves every source for cfg.
func ReadSources(in Inputs, cfg *config.Config) (Sources, error) {
	var s Sources
	var err error
	if s.Database, err = DatabaseURL(in, cfg); err != nil {
		return s, err
	}
	if s.State, err = StateURL(cfg); err != nil {
		return s, err
	}
	s.DatabaseFrom, s.StateFrom = DatabaseFrom(in, cfg), StateFrom(cfg)
	if s.Kandev, err = Secret(in.Getenv, "WATCHDOGD_KANDEV_TOKEN", cfg.Kandev.TokenFile); err != nil {
		return s, fmt.Errorf("kandev.token_file: %w", err)
	}
	if cfg.Slack != nil {
		if s.Slack, err = Secret(in.Getenv, "WATCHDOGD_SLACK_TOKEN", cfg.Slack.TokenFile); err != nil {
			return s, fmt.Errorf("slack.token_file: %w", err)
		}
	}
	return s, nil
}

// Changed names what differs from o, for a log line that must never carry
// the values themselves.
func (s Sources) Changed(o Sources) []string {
	var names []string
	if s.Database != o.Database {
		names = append(names, "database URL")
	}
	if s.State != o.State {
		names = append(names, "state URL")
	}
	if s.Slack != o.Slack {
		names = append(names, "slack token")
	}
	if s.Kandev != o.Kandev {
		names = append(names, "kandev token")
	}
	return names
}

// Secret reads a token: the environment variable wins over the file.
func Secret(getenv func(string) string, env, file string) (config.Secret, error) {
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

// StateURL resolves the ledger's URL: state.url_file, else state.url.
func StateURL(cfg *config.Config) (string, error) {
	if cfg.State.URLFile != "" {
		b, err := os.ReadFile(cfg.State.URLFile)
		if err != nil {
			return "", fmt.Errorf("state.url_file: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return cfg.State.URL, nil
}
