package main

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/watchdogd/watchdogd/internal/app"
	"github.com/watchdogd/watchdogd/internal/config"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// command is one of watchdogd's commands. Each owns its flags and its
// positional arguments, and runs with what they parsed.
type command interface {
	// flags declares its flags on fs.
	flags(fs *flag.FlagSet)
	// args takes its positional arguments; a usageError when they are
	// wrong.
	args(pos []string) error
	// run runs it.
	run(ctx context.Context, e proc) error
}

// proc is what a command gets from its process.
type proc struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	version        string
	now            func() time.Time
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

// noArgs is for a command that takes no positional argument.
type noArgs struct{}

func (noArgs) args(pos []string) error { return unexpected(pos) }

// configFlag is the config file flag most commands take.
type configFlag struct{ config string }

func (c *configFlag) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", "", "config file (YAML)")
}

// ledgerFlag is the config flag of a command that works on the daemon's
// ledger.
type ledgerFlag struct{ config string }

func (c *ledgerFlag) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", "", "config file (YAML): its state.url is the ledger")
}

// inputs are a command's config file and database URL flag, with the
// process's environment.
func inputs(config, databaseURL string, e proc) app.Inputs {
	return app.Inputs{ConfigFile: config, DatabaseURL: databaseURL, Getenv: e.getenv, Log: e.log}
}
