// Package app wires watchdogd together: configuration, kandev's snapshot,
// findings, the ledger, notifiers, the schedule, HTTP and metrics. Every
// subcommand enters through Run.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/watchdogd/watchdogd/internal/term"
)

// Options are a parsed command line.
type Options struct {
	Command     string // scan, demo, version, …
	ConfigFile  string
	DatabaseURL string
	// Now fixes the instant ages are measured at (zero: the wall clock).
	Now    time.Time
	Output string // table or json
	Once   bool
	DryRun bool
	// Files are check-config's arguments.
	Files []string

	// Operator commands.
	Sub       string        // silence add|list|expire, episodes list|show|resolve
	Match     []string      // --match key=value
	For       time.Duration // silence duration
	Comment   string
	Author    string
	ID        string // silence or episode id
	All       bool   // silence list --all
	Open      bool   // episodes list --open
	Limit     int    // episodes list --limit (0: all)
	Workspace string // notify-test --workspace

	Version string
	Stdout  io.Writer
	Stderr  io.Writer
	Getenv  func(string) string
}

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// Run runs one subcommand and returns the process exit code. Errors are
// printed as one line on stderr.
func Run(ctx context.Context, opts Options) int {
	var err error
	switch opts.Command {
	case "version":
		_, err = fmt.Fprintf(opts.Stdout, "watchdogd %s (%s %s/%s)\n", opts.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	case "scan":
		err = runScan(ctx, opts)
	case "demo":
		err = runDemo(ctx, opts)
	case "silence":
		err = runSilence(ctx, opts)
	case "episodes":
		err = runEpisodes(ctx, opts)
	case "notify-test":
		err = runNotifyTest(ctx, opts)
	case "check-config":
		err = runCheckConfig(opts)
	case "run":
		if opts.Once || opts.DryRun {
			err = runOnce(ctx, opts)
		} else {
			err = runDaemon(ctx, opts)
		}
	default:
		err = usageError(fmt.Sprintf("unknown command %q", opts.Command))
	}
	if err == nil {
		return ExitOK
	}
	if errors.As(err, new(silentFailure)) {
		return ExitFailure
	}
	fmt.Fprintf(opts.Stderr, "watchdogd %s: %s\n", opts.Command, term.OneLine(err))
	var u usageError
	if errors.As(err, &u) {
		return ExitUsage
	}
	return ExitFailure
}

type usageError string

func (u usageError) Error() string { return string(u) }

func (o Options) now() time.Time {
	if !o.Now.IsZero() {
		return o.Now
	}
	return time.Now()
}
