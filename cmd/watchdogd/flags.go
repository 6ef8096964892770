package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/watchdogd/watchdogd/internal/app"
)

const usage = `Usage: watchdogd <command> [flags]

Commands:
  run                               run the watchdog daemon (--once: one cycle; --dry-run: decide, send nothing)
  scan                              read kandev once and print the findings (no ledger, no sending)
  check-config FILE…                check config files: SUCCESS or FAILED with every problem
  silence add|list|expire           mute matching episodes on the ledger (like amtool)
  episodes list|show|resolve|retry  list episodes, show one, force-resolve one, or retry failed sends
  notify-test                       post one test message through the configured Slack route
  demo                              run one cycle on a built-in demo database and show what would be sent
  version                           print the version (also --version)

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
	if isHelp(args[0]) {
		fmt.Fprint(stdout, usage)
		return opts, app.ExitOK, false
	}
	opts.Command = args[0]
	if opts.Command == "--version" || opts.Command == "-version" {
		opts.Command = "version" // as Prometheus's tools spell it
	}
	rest := args[1:]
	if subs := subcommands(opts.Command); subs != "" {
		if code, ok := takeSub(&opts, rest, subs, stdout, stderr); !ok {
			return opts, code, false
		}
		rest = rest[1:]
	}
	fs := flag.NewFlagSet(strings.TrimSpace("watchdogd "+opts.Command+" "+opts.Sub), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var now string
	if !defineFlags(fs, &opts, &now) {
		fmt.Fprintf(stderr, "watchdogd: unknown command %q (see watchdogd -h)\n", opts.Command)
		return opts, app.ExitUsage, false
	}
	args, err := parseInterspersed(fs, rest)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage of %s:\n", fs.Name())
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return opts, app.ExitOK, false
		}
		fmt.Fprintf(stderr, "%s: %v (see %s -h)\n", fs.Name(), err, fs.Name())
		return opts, app.ExitUsage, false
	}
	if !positional(args, &opts, stderr) {
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

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// subcommands names a command's subcommands, as its usage line spells them
// ("" for a command without any).
func subcommands(command string) string {
	switch command {
	case "silence":
		return "add|list|expire"
	case "episodes":
		return "list|show|resolve|retry"
	}
	return ""
}

// takeSub sets opts.Sub from rest[0], or prints the command's help or one
// usage line.
func takeSub(opts *app.Options, rest []string, subs string, stdout, stderr io.Writer) (int, bool) {
	name := "watchdogd " + opts.Command
	switch {
	case len(rest) > 0 && isHelp(rest[0]):
		fmt.Fprint(stdout, subUsage(opts.Command))
		return app.ExitOK, false
	case len(rest) == 0 || strings.HasPrefix(rest[0], "-"):
		fmt.Fprintf(stderr, "%s: missing subcommand, one of %s (see %s -h)\n", name, subs, name)
		return app.ExitUsage, false
	case !slices.Contains(strings.Split(subs, "|"), rest[0]):
		fmt.Fprintf(stderr, "%s: unknown subcommand %q, want one of %s (see %s -h)\n", name, rest[0], subs, name)
		return app.ExitUsage, false
	}
	opts.Sub = rest[0]
	return 0, true
}

// subUsage is the help of a command with subcommands.
func subUsage(command string) string {
	lines := map[string]string{
		"silence": `  add --match key=value… --for DURATION --comment TEXT  mute matching episodes (like amtool)
  list [--all]                                         active silences (--all: expired ones too)
  expire ID                                            end a silence now
`,
		"episodes": `  list [--open] [--limit N]  episodes, newest first
  show ID                    one episode with every action: what was sent, where, when, how it ended
  resolve ID                 close an episode by hand (the daemon then edits its Slack message)
  retry [ID]                 after fixing a token, channel or scope: send again what failed for
                             open episodes nobody was told of (or the one given)
`,
	}[command]
	return fmt.Sprintf(`Usage: watchdogd %[1]s %[2]s [flags]

%[3]s
Each takes --config FILE, the daemon's config: its state.url is the ledger.
Run "watchdogd %[1]s <subcommand> -h" for its flags.
`, command, subcommands(command), lines)
}

// parseInterspersed parses flags wherever they stand among the positional
// arguments ("episodes show ID --config F" as well as "--config F ID"),
// which the flag package alone stops at. After "--" everything is
// positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if i := len(args) - len(rest); i > 0 && args[i-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
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
		switch opts.Sub {
		case "add":
			fs.Func("match", "key=value to match (workspace_id, task_id, session_id, kind); repeatable", func(v string) error {
				opts.Match = append(opts.Match, v)
				return nil
			})
			fs.DurationVar(&opts.For, "for", 0, "how long the silence lasts (like 2h)")
			fs.StringVar(&opts.Comment, "comment", "", "why (required)")
			fs.StringVar(&opts.Author, "author", os.Getenv("USER"), "who")
		case "list":
			fs.BoolVar(&opts.All, "all", false, "list expired silences too")
		}
	case "episodes":
		fs.StringVar(&opts.ConfigFile, "config", "", "config file (YAML): its state.url is the ledger")
		if opts.Sub == "list" {
			fs.BoolVar(&opts.Open, "open", false, "list open episodes only")
			fs.IntVar(&opts.Limit, "limit", 500, "list at most this many, newest first (0: all)")
		}
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
// files, the one ID of silence expire and episodes resolve/show, or the
// optional one of episodes retry; any other command takes none.
func positional(args []string, opts *app.Options, stderr io.Writer) bool {
	switch {
	case opts.Command == "check-config":
		opts.Files = args
	case opts.Command == "episodes" && opts.Sub == "retry" && len(args) <= 1:
		opts.ID = strings.Join(args, "")
	case opts.Command == "silence" && opts.Sub == "expire", opts.Command == "episodes" && (opts.Sub == "resolve" || opts.Sub == "show"):
		if len(args) != 1 {
			fmt.Fprintf(stderr, "watchdogd %s %s: want exactly one ID, got %d\n", opts.Command, opts.Sub, len(args))
			return false
		}
		opts.ID = args[0]
	case len(args) > 0:
		fmt.Fprintf(stderr, "watchdogd %s: unexpected argument %q\n", strings.TrimSpace(opts.Command+" "+opts.Sub), strings.Join(args, " "))
		return false
	}
	return true
}
