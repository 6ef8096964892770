package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/watchdogd/watchdogd/internal/app"
)

const usage = `Usage: watchdogd <command> [flags]

Commands:
  scan          read kandev once and print the findings (no ledger, no sending)
  run           run the watchdog (--once: one cycle; --dry-run: decide, send nothing)
  demo          scan a built-in demo database and show what watchdogd would send
  version       print the version

Run "watchdogd <command> -h" for a command's flags.
`

// parseArgs turns the command line into app.Options. On a usage problem it
// prints one line (or the help that was asked for) and returns ok=false with
// the exit code.
func parseArgs(args []string, stdout, stderr io.Writer) (app.Options, int, bool) {
	opts := app.Options{Stdout: stdout, Stderr: stderr, Output: "table"}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return opts, app.ExitUsage, false
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		return opts, app.ExitOK, false
	}
	opts.Command = args[0]
	fs := flag.NewFlagSet("watchdogd "+opts.Command, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var now string
	switch opts.Command {
	case "scan":
		fs.StringVar(&opts.ConfigFile, "config", "", "config file (YAML)")
		fs.StringVar(&opts.DatabaseURL, "database-url", "", "kandev's database: sqlite:///abs/path.db, sqlite://rel.db or postgres://…")
		fs.StringVar(&now, "now", "", "measure ages at this RFC 3339 instant instead of the clock")
		fs.StringVar(&opts.Output, "output", "table", "table or json")
	case "run":
		fs.StringVar(&opts.ConfigFile, "config", "", "config file (YAML)")
		fs.StringVar(&opts.DatabaseURL, "database-url", "", "kandev's database (overrides the config and WATCHDOGD_DATABASE_URL)")
		fs.BoolVar(&opts.Once, "once", false, "run one cycle and exit")
		fs.BoolVar(&opts.DryRun, "dry-run", false, "decide and print, but write and send nothing (implies --once)")
	case "demo":
		fs.StringVar(&opts.ConfigFile, "config", "", "config file (YAML)")
		fs.StringVar(&opts.Output, "output", "table", "table or json")
	case "version":
	default:
		fmt.Fprintf(stderr, "watchdogd: unknown command %q (see watchdogd -h)\n", opts.Command)
		return opts, app.ExitUsage, false
	}
	if err := fs.Parse(args[1:]); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprintf(stdout, "Usage of watchdogd %s:\n", opts.Command)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return opts, app.ExitOK, false
		}
		fmt.Fprintf(stderr, "watchdogd %s: %v (see watchdogd %s -h)\n", opts.Command, err, opts.Command)
		return opts, app.ExitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "watchdogd %s: unexpected argument %q\n", opts.Command, strings.Join(fs.Args(), " "))
		return opts, app.ExitUsage, false
	}
	if now != "" {
		t, err := time.Parse(time.RFC3339Nano, now)
		if err != nil {
			fmt.Fprintf(stderr, "watchdogd %s: --now %q is not an RFC 3339 time\n", opts.Command, now)
			return opts, app.ExitUsage, false
		}
		opts.Now = t
	}
	return opts, 0, true
}
