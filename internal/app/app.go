// Package app wires watchdogd's parts together for its commands: the
// config and the values it points at (URLs, tokens), loggers, and a cycle
// connected to kandev, the ledger and the outlets. It decides nothing and
// runs nothing by itself: cmd/watchdogd's commands and internal/daemon
// call it.
package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/ledger"
)

// Inputs are what a command takes from its command line and its process
// that the config does not say: the config file, a database URL flag, the
// environment.
type Inputs struct {
	ConfigFile  string
	DatabaseURL string
	Getenv      func(string) string
	// Log overrides the config's log: block where set (--log.level,
	// --log.format): every load goes through LoadConfig, so a reload
	// keeps it.
	Log config.Log
}

// LoadConfig reads the config file, or the defaults when none is given,
// with the command line's log settings over the file's.
func LoadConfig(in Inputs) (*config.Config, error) {
	cfg := config.Default()
	if in.ConfigFile != "" {
		var err error
		if cfg, err = config.Load(in.ConfigFile, in.Getenv); err != nil {
			return nil, err
		}
	}
	cfg.Log = in.LogConfig(cfg.Log)
	return cfg, nil
}

// LogConfig is file's log settings with the command line's over them.
func (in Inputs) LogConfig(file config.Log) config.Log {
	if in.Log.Level != "" {
		file.Level = in.Log.Level
	}
	if in.Log.Format != "" {
		file.Format = in.Log.Format
	}
	return file
}

// DatabaseURL resolves kandev's database: flag > env > file > kandev's own
// default location.
func DatabaseURL(in Inputs, cfg *config.Config) (string, error) {
	switch {
	case in.DatabaseURL != "":
		return in.DatabaseURL, nil
	case in.Getenv("WATCHDOGD_DATABASE_URL") != "":
		return in.Getenv("WATCHDOGD_DATABASE_URL"), nil
	case cfg.Database.URL != "":
		return cfg.Database.URL, nil
	case cfg.Database.URLFile != "":
		b, err := os.ReadFile(cfg.Database.URLFile)
		if err != nil {
			return "", fmt.Errorf("database.url_file: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return kandev.DefaultURL(in.Getenv), nil
}

// OpenLedger opens the ledger a running daemon uses, for the operator
// commands (the tools for the person paged at 3 a.m., like amtool); it
// never creates one.
func OpenLedger(ctx context.Context, in Inputs) (*config.Config, *ledger.Store, error) {
	cfg, err := LoadConfig(in)
	if err != nil {
		return nil, nil, err
	}
	url, err := StateURL(cfg)
	if err != nil {
		return nil, nil, err
	}
	st, err := ledger.OpenExisting(ctx, url)
	if errors.Is(err, ledger.ErrNoLedger) {
		return nil, nil, fmt.Errorf("%w; the daemon creates it on its first start (is --config the daemon's config?)", err)
	}
	return cfg, st, err
}
