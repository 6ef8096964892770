package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The files `demo --keep DIR` leaves in DIR.
const (
	keptDatabase = "kandev.db"
	keptConfig   = "watchdogd.yaml"
	keptLedger   = "state.db"
)

// keepDir makes dir (absolute, so the config it gets works from any
// working directory) and refuses one that already holds a file the demo
// would write: an earlier demo's ledger would hold episodes for the new
// database's sessions, and a config there may be the user's own.
func keepDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("--keep %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("--keep: %w", err)
	}
	for _, name := range []string{keptDatabase, keptConfig, keptLedger} {
		p := filepath.Join(abs, name)
		if _, err := os.Lstat(p); err == nil {
			return "", fmt.Errorf("--keep: %s already exists; give a new or empty directory (or remove %s, %s and %s from it)",
				p, keptDatabase, keptConfig, keptLedger)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("--keep: %w", err)
		}
	}
	return abs, nil
}

// keepDemo writes the config that runs the daemon on the kept database
// and, for a person reading the table, says what to run next. dir is the
// directory as the user gave it (for the command they can paste), abs the
// one made of it.
func keepDemo(e proc, dir, abs string, tell bool) error {
	cfg := filepath.Join(abs, keptConfig)
	if err := os.WriteFile(cfg, []byte(demoConfig(abs)), 0o644); err != nil {
		return fmt.Errorf("--keep: %w", err)
	}
	if tell {
		fmt.Fprintf(e.stdout, "\nKept in %s: %s (the demo's kandev database) and %s (runs the daemon on it; Slack steps go to its log).\nNext:\n\n  watchdogd run --config %s\n\nand open http://127.0.0.1:9464/ (the status page; /metrics beside it).\n",
			abs, keptDatabase, keptConfig, shellQuote(filepath.Join(dir, keptConfig)))
	}
	return nil
}

// demoConfig is the kept config: the demo database, a ledger beside it,
// the default listener, and no slack: block, so that every Slack step is
// written to the log. Paths are JSON strings, which YAML reads as they
// are whatever they hold.
func demoConfig(dir string) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return `# watchdogd on the demo's kandev database, written by watchdogd demo --keep.
# Run it with:  watchdogd run --config <this file>
# and open http://127.0.0.1:9464/ (the status page; /metrics beside it).
#
# There is no slack: block, so every Slack step is written to the log (one
# warning at start says so). Every key left out is at its default
# (config/watchdogd.yaml lists them); the README's "From the demo to your
# kandev" says how to point this at your own kandev and Slack.

# kandev's database, read strictly read-only: here the demo's. Yours is
# kandev's own file (sqlite:///…/.kandev/data/kandev.db) or a postgres:// URL.
database:
  url: ` + q("sqlite://"+filepath.Join(dir, keptDatabase)) + `

# watchdogd's own ledger (episodes, what was sent): made at the first run.
state:
  url: ` + q("sqlite://"+filepath.Join(dir, keptLedger)) + `

# The status page, the API and /metrics. Another port if 9464 is taken.
http:
  listen: 127.0.0.1:9464
`
}

// shellQuote quotes a path for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
