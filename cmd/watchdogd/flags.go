package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/watchdogd/watchdogd/internal/config"
)

const usage = `Usage: watchdogd <command> [flags]

Commands:
  run                               run the watchdog daemon (--once: one cycle; --dry-run: decide, send nothing)
  scan                              read kandev once and print the findings (no ledger, no sending)
  check-config FILE…                check config files: SUCCESS or FAILED with every problem
  silence add|list|query|expire     mute matching episodes on the ledger (like amtool)
  episodes list|show|resolve|retry  list episodes, show one, force-resolve one, or retry failed sends
  notify-test                       post one test message through the configured Slack route
  demo                              run one cycle on a built-in demo database and show what would be sent (--keep DIR: keep it, with a config to run on)
  version                           print the version (also --version)

Run "watchdogd <command> -h" for a command's flags.
`

// parsed is a command line: the command with its flags and arguments
// parsed, and its name as the user wrote it ("episodes show").
type parsed struct {
	name string // the command, without its subcommand: how run errors are prefixed
	cmd  command
	log  config.Log // --log.level, --log.format
}

// newCommand is the command a name (and a subcommand) stands for; nil for
// an unknown one.
func newCommand(name, sub string) command {
	switch name + " " + sub {
	case "scan ":
		return &scanCmd{}
	case "run ":
		return &runCmd{}
	case "demo ":
		return &demoCmd{}
	case "check-config ":
		return &checkConfigCmd{}
	case "notify-test ":
		return &notifyTestCmd{}
	case "version ":
		return &versionCmd{}
	case "silence add":
		return &silenceAddCmd{}
	case "silence list", "silence query": // query: amtool's spelling
		return &silenceListCmd{}
	case "silence expire":
		return &silenceExpireCmd{}
	case "episodes list":
		return &episodesListCmd{}
	case "episodes show":
		return &episodesShowCmd{}
	case "episodes resolve":
		return &episodesResolveCmd{}
	case "episodes retry":
		return &episodesRetryCmd{}
	}
	return nil
}

// parseArgs turns the command line into a command. On a usage problem it
// prints one line (or the help that was asked for) and returns ok=false with
// the exit code.
func parseArgs(args []string, stdout, stderr io.Writer) (parsed, int, bool) {
	var p parsed
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return p, exitUsage, false
	}
	if isHelp(args[0]) {
		fmt.Fprint(stdout, usage)
		return p, exitOK, false
	}
	p.name = args[0]
	if p.name == "--version" || p.name == "-version" {
		p.name = "version" // as Prometheus's tools spell it
	}
	rest, sub := args[1:], ""
	if subs := subcommands(p.name); subs != "" {
		code, ok := takeSub(p.name, rest, subs, stdout, stderr)
		if !ok {
			return p, code, false
		}
		sub, rest = rest[0], rest[1:]
	}
	if p.cmd = newCommand(p.name, sub); p.cmd == nil {
		fmt.Fprintf(stderr, "watchdogd: unknown command %q (see watchdogd -h)\n", p.name)
		return p, exitUsage, false
	}
	fs := flag.NewFlagSet(strings.TrimSpace("watchdogd "+p.name+" "+sub), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	p.cmd.flags(fs)
	logFlags(fs, &p.log)
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage of %s:\n", fs.Name())
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return p, exitOK, false
		}
		fmt.Fprintf(stderr, "%s: %v (see %s -h)\n", fs.Name(), err, fs.Name())
		return p, exitUsage, false
	}
	if err := checkLog(p.log); err != nil {
		fmt.Fprintf(stderr, "%s: %v (see %s -h)\n", fs.Name(), err, fs.Name())
		return p, exitUsage, false
	}
	if err := p.cmd.args(pos); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return p, exitUsage, false
	}
	return p, 0, true
}

// logFlags are the flags every command takes, as Prometheus spells them:
// they override the config file's log: block, and a reload keeps them.
func logFlags(fs *flag.FlagSet, l *config.Log) {
	fs.StringVar(&l.Level, "log.level", "", "log level: debug, info, warn or error (overrides the config's log.level)")
	fs.StringVar(&l.Format, "log.format", "", "log format: json or console (overrides the config's log.format)")
}

// checkLog refuses a log level or format the logger does not have.
func checkLog(l config.Log) error {
	if l.Level != "" && !slices.Contains([]string{"debug", "info", "warn", "error"}, l.Level) {
		return usageError(fmt.Sprintf("--log.level %q: want debug, info, warn or error", l.Level))
	}
	if l.Format != "" && l.Format != "json" && l.Format != "console" {
		return usageError(fmt.Sprintf("--log.format %q: want json or console", l.Format))
	}
	return nil
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// subcommands names a command's subcommands, as its usage line spells them
// ("" for a command without any).
func subcommands(command string) string {
	switch command {
	case "silence":
		return "add|list|query|expire"
	case "episodes":
		return "list|show|resolve|retry"
	}
	return ""
}

// takeSub checks that rest starts with one of the command's subcommands, or
// prints the command's help or one usage line.
func takeSub(command string, rest []string, subs string, stdout, stderr io.Writer) (int, bool) {
	name := "watchdogd " + command
	switch {
	case len(rest) > 0 && isHelp(rest[0]):
		fmt.Fprint(stdout, subUsage(command))
		return exitOK, false
	case len(rest) == 0 || strings.HasPrefix(rest[0], "-"):
		fmt.Fprintf(stderr, "%s: missing subcommand, one of %s (see %s -h)\n", name, subs, name)
		return exitUsage, false
	case !slices.Contains(strings.Split(subs, "|"), rest[0]):
		fmt.Fprintf(stderr, "%s: unknown subcommand %q, want one of %s (see %s -h)\n", name, rest[0], subs, name)
		return exitUsage, false
	}
	return 0, true
}

// subUsage is the help of a command with subcommands.
func subUsage(command string) string {
	lines := map[string]string{
		"silence": `  add --match key=value… --for DURATION --comment TEXT  mute matching episodes (like amtool; --duration is --for)
  list [--all] [--output json]                         active silences (--all: expired ones too)
  query                                                the same as list (amtool's spelling)
  expire ID                                            end a silence now
`,
		"episodes": `  list [--open] [--limit N] [--output json]  episodes, newest first
  show ID [--output json]    one episode with every action: what was sent, where, when, how it ended
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

// unexpected refuses positional arguments where none is taken.
func unexpected(pos []string) error {
	if len(pos) > 0 {
		return usageError(fmt.Sprintf("unexpected argument %q", strings.Join(pos, " ")))
	}
	return nil
}

// oneID takes the one ID a command acts on.
func oneID(pos []string, id *string) error {
	if len(pos) != 1 {
		return usageError(fmt.Sprintf("want exactly one ID, got %d", len(pos)))
	}
	*id = pos[0]
	return nil
}
