package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/watchdogd/watchdogd/internal/app"
	"github.com/watchdogd/watchdogd/internal/config"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// command is one of watchdogd's commands. It declares its flags and
// positional arguments on its kingpin clause, checks what they parsed to,
// and runs with it.
type command interface {
	// define declares its flags and arguments on k.
	define(k *kingpin.CmdClause)
	// check refuses what was parsed when it cannot run (a usageError),
	// and completes it from the process (a config found without --config,
	// an author from $USER), before anything is opened.
	check(e proc) error
	// run runs it.
	run(ctx context.Context, e proc) error
}

// proc is what a command gets from its process.
type proc struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// exists reports whether a file is there (the image's config path).
	exists  func(string) bool
	version string
	now     func() time.Time
	// log is --log.level and --log.format, over the config file's.
	log config.Log
}

// usageError is a mistake on the command line: one line, exit 2.
type usageError string

func (u usageError) Error() string { return string(u) }

// silentFailure exits 1 without another line: the command already said
// what failed.
type silentFailure struct{}

func (silentFailure) Error() string { return "failed" }

// noCheck is for a command whose flags and arguments need no check.
type noCheck struct{}

func (noCheck) check(proc) error { return nil }

// configFlag is --config, of the commands that read the daemon's config.
// Not given, it is found as the daemon finds it (findConfig); given is
// what the command line said.
type configFlag struct{ given, config string }

// define declares --config; what says what the config is for.
func (c *configFlag) define(k *kingpin.CmdClause, what string) {
	k.Flag("config", what+"; default $WATCHDOGD_CONFIG, else "+imageConfig+" where it exists, else the built-in defaults").
		PlaceHolder("FILE").StringVar(&c.given)
}

// resolve finds the config when --config was not given. A
// $WATCHDOGD_CONFIG naming no file is an error (exit 1), not the defaults:
// whoever set it meant a config.
func (c *configFlag) resolve(e proc) error {
	c.config = c.given
	if c.config != "" {
		return nil
	}
	c.config = findConfig(e.getenv, e.exists)
	if env := e.getenv("WATCHDOGD_CONFIG"); env != "" && !e.exists(env) {
		return fmt.Errorf("$WATCHDOGD_CONFIG is %s, which does not exist: mount the config there, give --config FILE, or set WATCHDOGD_CONFIG= for the built-in defaults", env)
	}
	return nil
}

// ledgerFlag is the config flag of a command that works on the daemon's
// ledger.
type ledgerFlag struct{ configFlag }

func (c *ledgerFlag) define(k *kingpin.CmdClause) {
	c.configFlag.define(k, "the daemon's config file (YAML): its state.url is the ledger")
}

// outputFlag is -o/--output table|json, as amtool spells it.
type outputFlag struct{ output string }

func (o *outputFlag) define(k *kingpin.CmdClause) {
	k.Flag("output", "table for people, json for scripts (a stable shape: schema_version 1)").Short('o').
		Default("table").HintOptions("table", "json").StringVar(&o.output)
}

// check refuses an output format other than table and json.
func (o *outputFlag) check() error {
	if o.output != "table" && o.output != "json" {
		return usageError(fmt.Sprintf("--output %q: want table or json", o.output))
	}
	return nil
}

// logFlags are the flags every command takes, as Prometheus spells them:
// they override the config file's log: block, and a reload keeps them.
func logFlags(a *kingpin.Application, l *config.Log) {
	a.Flag("log.level", "log level: debug, info, warn or error (over the config's log.level)").PlaceHolder("LEVEL").
		HintOptions(logLevels...).StringVar(&l.Level)
	a.Flag("log.format", "log format: json or console (over the config's log.format)").PlaceHolder("FORMAT").
		HintOptions("json", "console").StringVar(&l.Format)
}

var logLevels = []string{"debug", "info", "warn", "error"}

// checkLog refuses a log level or format the logger does not have.
func checkLog(l config.Log) error {
	if l.Level != "" && !slices.Contains(logLevels, l.Level) {
		return usageError(fmt.Sprintf("--log.level %q: want debug, info, warn or error", l.Level))
	}
	if l.Format != "" && l.Format != "json" && l.Format != "console" {
		return usageError(fmt.Sprintf("--log.format %q: want json or console", l.Format))
	}
	return nil
}

// inputs are a command's config file and database URL flag, with the
// process's environment.
func inputs(config, databaseURL string, e proc) app.Inputs {
	return app.Inputs{ConfigFile: config, DatabaseURL: databaseURL, Getenv: e.getenv, Log: e.log}
}

// configBack is how a command the user may paste next names the config:
// "--config FILE " where one was given on the command line, nothing where
// it was found without one.
func (c *configFlag) configBack() string {
	if c.given == "" {
		return ""
	}
	return "--config " + shellQuote(c.given) + " "
}
