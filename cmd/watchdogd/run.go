package main

import (
	"context"
	"fmt"

	"github.com/alecthomas/kingpin/v2"

	"github.com/watchdogd/watchdogd/internal/daemon"
)

// runCmd is `watchdogd run`: the daemon, or with --once one cycle on the
// same code path (--dry-run: decide and print, write and send nothing).
type runCmd struct {
	configFlag
	databaseURL  string
	once, dryRun bool
}

func (c *runCmd) define(k *kingpin.CmdClause) {
	c.configFlag.define(k, "config file (YAML)")
	k.Flag("database-url", "kandev's database (over the config and WATCHDOGD_DATABASE_URL)").PlaceHolder("URL").StringVar(&c.databaseURL)
	k.Flag("once", "run one cycle and exit").BoolVar(&c.once)
	k.Flag("dry-run", "decide and print, but write and send nothing (implies --once)").BoolVar(&c.dryRun)
}

func (c *runCmd) check(e proc) error {
	return c.resolve(e)
}

func (c *runCmd) run(ctx context.Context, e proc) error {
	opts := daemon.Options{Inputs: inputs(c.config, c.databaseURL, e), Stdout: e.stdout, Stderr: e.stderr, Version: e.version}
	if c.once || c.dryRun {
		return daemon.Once(ctx, opts, c.dryRun, e.now)
	}
	return daemon.Run(ctx, opts)
}

// versionCmd is `watchdogd version`.
type versionCmd struct{ noCheck }

func (c *versionCmd) define(*kingpin.CmdClause) {}

func (c *versionCmd) run(_ context.Context, e proc) error {
	_, err := fmt.Fprintln(e.stdout, versionLine(e.version))
	return err
}
