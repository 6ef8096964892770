package app

import (
	"fmt"

	"github.com/watchdogd/watchdogd/internal/config"
)

// DatabaseFrom says where DatabaseURL found kandev's database URL, in the
// same order: an error about a URL names it, so that whoever reads one
// knows whether to change a flag, an environment variable or which line
// of which file.
func DatabaseFrom(in Inputs, cfg *config.Config) string {
	switch {
	case in.DatabaseURL != "":
		return "--database-url"
	case in.Getenv("WATCHDOGD_DATABASE_URL") != "":
		return "$WATCHDOGD_DATABASE_URL"
	case cfg.Database.URL != "":
		return field(cfg, "database.url", false)
	case cfg.Database.URLFile != "":
		return "the file " + cfg.Database.URLFile + " named by " + field(cfg, "database.url_file", false)
	}
	return "kandev's default location (no --database-url, $WATCHDOGD_DATABASE_URL, database.url or database.url_file)"
}

// StateFrom says where StateURL found the ledger's URL.
func StateFrom(cfg *config.Config) string {
	if cfg.State.URLFile != "" {
		return "the file " + cfg.State.URLFile + " named by " + field(cfg, "state.url_file", false)
	}
	return field(cfg, "state.url", true)
}

// field names a config key and where it is set: its file and line, or,
// for a key that has a default, that default.
func field(cfg *config.Config, path string, hasDefault bool) string {
	if at := cfg.Where(path); at != "" {
		return path + " at " + at
	}
	if !hasDefault {
		return path
	}
	if cfg.File != "" {
		return path + "'s default (" + cfg.File + " does not set it)"
	}
	return path + "'s default (no --config)"
}

// FromError adds to err where the URL it is about came from.
func FromError(err error, from string) error {
	if err == nil || from == "" {
		return err
	}
	return fmt.Errorf("%w (URL from %s)", err, from)
}
