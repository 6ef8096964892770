// Command watchdogd keeps kandev's AI-agent sessions from silently rotting:
// it reads kandev's database from the outside, resolves every active
// session's current turn, flags stalled turns and unanswered questions, and
// tells the right people once per step.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // quiet_hours time zones in a static image without zoneinfo

	"github.com/watchdogd/watchdogd/internal/app"
)

// version is set at build time (-ldflags "-X main.version=…").
var version = "dev"

func main() { os.Exit(run()) }

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	opts, code, ok := parseArgs(os.Args[1:], os.Stdout, os.Stderr)
	if !ok {
		return code
	}
	opts.Version = version
	opts.Getenv = os.Getenv
	return app.Run(ctx, opts)
}
