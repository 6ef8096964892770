// Command watchdogd keeps kandev's AI-agent sessions from silently rotting:
// it reads kandev's database from the outside, resolves every active
// session's current turn, flags stalled turns and unanswered questions, and
// tells the right people once per step.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"
	_ "time/tzdata" // quiet_hours time zones in a static image without zoneinfo

	"github.com/watchdogd/watchdogd/internal/term"
)

// version is set at build time (-ldflags "-X main.version=…"); a binary
// built otherwise (go install, go build) names what the Go toolchain
// recorded instead (buildVersion).
var version = "dev"

func main() { os.Exit(run()) }

// run parses the command line into Options and runs them, mapping what
// failed to one line and an exit code.
func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	p := proc{
		stdout:  os.Stdout,
		stderr:  os.Stderr,
		getenv:  os.Getenv,
		exists:  fileExists,
		version: buildVersion(version, debug.ReadBuildInfo),
		now:     time.Now,
	}
	o, code, ok := parse(os.Args[1:], p)
	if !ok {
		return code
	}
	return exitCode(o.Name, Run(ctx, o), p.stderr)
}

// Run runs a parsed command line.
func Run(ctx context.Context, o Options) error { return o.Cmd.run(ctx, o.Proc) }

// exitCode is the process's exit code for what a command returned; a
// failure is said on one line first, unless the command said it already.
func exitCode(name string, err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if errors.As(err, new(silentFailure)) {
		return exitFailure
	}
	fmt.Fprintf(stderr, "watchdogd %s: %s\n", name, term.OneLine(err))
	if errors.As(err, new(usageError)) {
		return exitUsage
	}
	return exitFailure
}

// buildVersion is v unless it is the "dev" placeholder; then the module's
// version (go install …@v1.2.3), else the commit the binary was built from,
// so that a report of "watchdogd dev" never leaves anyone guessing.
func buildVersion(v string, read func() (*debug.BuildInfo, bool)) string {
	bi, ok := read()
	if v != "dev" || !ok {
		return v
	}
	if m := bi.Main.Version; m != "" && m != "(devel)" {
		return m
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 7:
			rev = s.Value[:7]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	if rev == "" {
		return v
	}
	return "dev-" + rev + dirty
}
