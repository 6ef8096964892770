package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"

	"github.com/watchdogd/watchdogd/internal/daemon"
)

// runCmd is `watchdogd run`: the daemon, or with --once one cycle on the
// same code path (--dry-run: decide and print, write and send nothing).
type runCmd struct {
	noArgs
	config, databaseURL string
	once, dryRun        bool
}

func (c *runCmd) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", "", "config file (YAML)")
	fs.StringVar(&c.databaseURL, "database-url", "", "kandev's database (overrides the config and WATCHDOGD_DATABASE_URL)")
	fs.BoolVar(&c.once, "once", false, "run one cycle and exit")
	fs.BoolVar(&c.dryRun, "dry-run", false, "decide and print, but write and send nothing (implies --once)")
}

func (c *runCmd) run(ctx context.Context, e proc) error {
	opts := daemon.Options{Inputs: inputs(c.config, c.databaseURL, e), Stdout: e.stdout, Stderr: e.stderr, Version: e.version}
	if c.once || c.dryRun {
		return daemon.Once(ctx, opts, c.dryRun, e.now)
	}
	return daemon.Run(ctx, opts)
}

// versionCmd is `watchdogd version`.
type versionCmd struct{ noArgs }

func (c *versionCmd) flags(*flag.FlagSet) {}

func (c *versionCmd) run(_ context.Context, e proc) error {
	_, err := fmt.Fprintf(e.stdout, "watchdogd %s (%s %s/%s)\n", e.version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}
