package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/watchdogd/watchdogd/internal/app"
)

const usage = `Usage: watchdogd <command> [flags]

Commands:
  run                 run the watchdog daemon (--once: one cycle; --dry-run: decide, send nothing)
  scan                read kandev once and print the findings (no ledger, no sending)
  check-config FILE…  check config files: SUCCESS or FAILED with every problem
  silence add|list|expire     mute matching episodes on the ledger (like amtool)
  episodes list|show|resolve  list episodes, show one with every action, or force-resolve one
  notify-test         post one test message through the configured Slack route
  demo                run one cycle on a built-in demo database and show what would be sent
  version             print the version

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
	rest := args[1:]
	if opts.Command == "silence" || opts.Command == "episodes" {
		if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
			fmt.Fprintf(stderr, "watchdogd %s: missing subcommand (see watchdogd -h)\n", opts.Command)
			return opts, app.ExitUsage, false
		}
		opts.Sub, rest = rest[0], rest[1:]
	}
	fs := flag.NewFlagSet("watchdogd "+opts.Command, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var now string
	if !defineFlags(fs, &opts, &now) {
		fmt.Fprintf(stderr, "watchdogd: unknown command %q (see watchdogd -h)\n", opts.Command)
		return opts, app.ExitUsage, false
	}
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage of watchdogd %s:\n", opts.Command)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return opts, app.ExitOK, false
		}
		fmt.Fprintf(stderr, "watchdogd %s: %v (see watchdogd %s -h)\n", opts.Command, err, opts.Command)
		return opts, app.ExitUsage, false
	}
	if !positional(fs, &opts, stderr) {
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

// defineFlags declares the command's flags on fs; false for an unknown
// command.
func defineFlags(fs *flag.FlagSet, opts *app.Options, now *string) bool {
	switch opts.Command {
	case "scan":
		fs.StringVar(&opts.ConfigFile, "config", "", "config file (YAML)")
		fs.StringVar(&opts.DatabaseURL, "database-url", "", "kandev's database: sqlite:///abs/path.db, sqlite://rel.db or postgres://…")
		fs.StringVar(now, "now", "", "measure ages at this RFC 3339 instant instead of the clock")
		fs.StringVar(&opts.Output, "output", "table", "table or json")
	case "run":
		fs.StringVar(&opts.ConfigFile, "config", "", "config file (YAML)")
		fs.StringVar(&opts.DatabaseURL, "database-url", "", "kandev's database (overrides the config and WATCHDOGD_DATABASE_URL)")
		fs.BoolVar(&opts.Once, "once", false, "run one cycle and exit")
		fs.BoolVar(&opts.DryRun, "dry-run", false, "decide and print, but write and send nothing (implies --once)")
	case "demo":
		fs.StringVar(&opts.ConfigFile, "config", "", "config file (YAML)")
		fs.StringVar(&opts.Output, "output", "table", "table or json")
	case "check-config":
	case "silence":
		fs.StringVar(&opts.ConfigFile, "config", "", "config file (YAML): its state.url is the ledger")
		fs.Func("match", "key=value to match (workspace_id, task_id, session_id, kind); repeatable", func(v string) error {
			opts.Match = append(opts.Match, v)
			return nil
		})
		fs.DurationVar(&opts.For, "for", 0, "how long the silence lasts (like 2h)")
		fs.StringVar(&opts.Comment, "comment", "", "why (required for add)")
		fs.StringVar(&opts.Author, "author", os.Getenv("USER"), "who")
		fs.BoolVar(&opts.All, "all", false, "list expired silences too")
	case "episodes":
		fs.StringVar(&opts.ConfigFile, "config", "", "config file (YAML): its state.url is the ledger")
		fs.BoolVar(&opts.Open, "open", false, "list open episodes only")
		fs.IntVar(&opts.Limit, "limit", 500, "list at most this many, newest first (0: all)")
	case "notify-test":
		fs.StringVar(&opts.ConfigFile, "config", "", "config file (YAML)")
		fs.StringVar(&opts.Workspace, "workspace", "", "route as an episode of this workspace would be")
	case "version":
	default:
		return false
	}
	return true
}

// positional takes the command's arguments after its flags: check-config's
// files, or the one ID of silence expire and episodes resolve/show; any
// other command takes none.
func positional(fs *flag.FlagSet, opts *app.Options, stderr io.Writer) bool {
	switch {
	case opts.Command == "check-config":
		opts.Files = fs.Args()
	case opts.Command == "silence" && opts.Sub == "expire", opts.Command == "episodes" && (opts.Sub == "resolve" || opts.Sub == "show"):
		if fs.NArg() != 1 {
			fmt.Fprintf(stderr, "watchdogd %s %s: want exactly one ID\n", opts.Command, opts.Sub)
			return false
		}
		opts.ID = fs.Arg(0)
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "watchdogd %s: unexpected argument %q\n", opts.Command, strings.Join(fs.Args(), " "))
		return false
	}
	return true
}
