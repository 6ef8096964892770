package main

import (
	"errors"
	"fmt"
	"strings"
	"text/template"

	"github.com/alecthomas/kingpin/v2"

	"github.com/watchdogd/watchdogd/internal/term"
)

// entry is a command as the command line knows it: its name, a one-line
// description and an example for --help, and the command (nil for one
// that only groups subcommands). A new command is one entry here.
type entry struct {
	name, help, example string
	aliases             []string
	cmd                 func() command
	subs                []entry
}

const appHelp = `watchdogd keeps kandev's AI-agent sessions from silently rotting: it reads kandev's database from the outside, flags stalled turns and unanswered questions, and tells the right people once per step.

The ledger commands (silence, episodes, report) work on the daemon's ledger, found through its config: --config, else $WATCHDOGD_CONFIG, else ` + imageConfig + ` where it exists.`

// commands are watchdogd's commands, in the order --help lists them.
func commands() []entry {
	return []entry{
		{name: "run", help: "Run the watchdog daemon (--once: one cycle; --dry-run: decide and print, send nothing).",
			example: "watchdogd run --once --dry-run", cmd: func() command { return &runCmd{} }},
		{name: "scan", help: "Read kandev once and print the findings; no ledger, no sending.",
			example: "watchdogd scan -o json", cmd: func() command { return &scanCmd{} }},
		{name: "check-config", help: "Check config files: SUCCESS, or FAILED with every problem as file:line: field: problem.",
			example: "watchdogd check-config watchdogd.yaml", cmd: func() command { return &checkConfigCmd{} }},
		{name: "silence", help: "Mute matching episodes on the daemon's ledger, as amtool does Alertmanager's.", example: "watchdogd silence query", subs: []entry{
			{name: "add", help: "Mute the episodes every matcher matches (=, !=, =~, !~ on workspace_id, task_id, session_id, kind); prints its id.",
				example: `watchdogd silence add kind=stalled_turn workspace_id=~"ws-pay.*" --duration 2h --comment "deploying"`,
				cmd:     func() command { return &silenceAddCmd{} }},
			{name: "query", aliases: []string{"list"}, help: "List the active silences, or those the matchers given match (--all: expired ones too; -q: ids only).",
				example: "watchdogd silence query kind=stalled_turn", cmd: func() command { return &silenceQueryCmd{} }},
			{name: "expire", help: "End silences now.",
				example: "watchdogd silence expire $(watchdogd silence query -q session_id=sess-stalled)", cmd: func() command { return &silenceExpireCmd{} }},
		}},
		{name: "episodes", help: "What the daemon found and sent, from its ledger; act on an episode by hand.", example: "watchdogd episodes list --open",
			subs: []entry{
				{name: "list", help: "List episodes, newest first (500 unless --limit; 0: all).",
					example: "watchdogd episodes list --open", cmd: func() command { return &episodesListCmd{} }},
				{name: "show", help: "Show one episode with every action: what was sent, where, when, how it ended.",
					example: "watchdogd episodes show 1a2b3c4d", cmd: func() command { return &episodesShowCmd{} }},
				{name: "resolve", help: "Close an episode by hand; a running daemon edits its Slack message.",
					example: "watchdogd episodes resolve 1a2b3c4d", cmd: func() command { return &episodesResolveCmd{} }},
				{name: "retry", help: "After fixing a token, channel or scope: send again what failed for open episodes nobody was told of (or the one given).",
					example: "watchdogd episodes retry", cmd: func() command { return &episodesRetryCmd{} }},
			}},
		{name: "report", help: "How much agent time was lost, and where: per kind, workspace, task and day, from the ledger (-o json: schema_version 1).",
			example: "watchdogd report --since 24h -o json", cmd: func() command { return &reportCmd{} }},
		{name: "notify-test", help: "Post one test message through the configured Slack route and check the bot's scopes.",
			example: "watchdogd notify-test --workspace ws-1", cmd: func() command { return &notifyTestCmd{} }},
		{name: "demo", help: "Run one cycle on a built-in demo database and show what would be sent (--keep DIR: keep it, with a config to run on).",
			example: "watchdogd demo --keep /tmp/watchdogd-demo", cmd: func() command { return &demoCmd{} }},
		{name: "version", help: "Print the version (also --version).", example: "watchdogd version", cmd: func() command { return &versionCmd{} }},
	}
}

// helpText is an entry's help as kingpin prints it: the description, and
// the example as a preformatted line below it.
func helpText(e entry) string { return e.help + examplePrefix + e.example }

// examplePrefix sets an example apart in a command's help.
const examplePrefix = "\n\n  $ "

// adder is what commands are added to: the application, or a command
// with subcommands.
type adder interface {
	Command(name, help string) *kingpin.CmdClause
}

// register adds e (and its subcommands) under parent, each command's
// flags declared on its clause, and records the commands by their full
// name ("silence add").
func register(parent adder, e entry, prefix string, cmds map[string]command) {
	k := parent.Command(e.name, helpText(e))
	for _, a := range e.aliases {
		k.Alias(a)
	}
	full := strings.TrimSpace(prefix + " " + e.name)
	if e.cmd != nil {
		c := e.cmd()
		c.define(k)
		cmds[full] = c
	}
	for _, s := range e.subs {
		register(k, s, full, cmds)
	}
}

// terminated is what kingpin's Terminate panics with, caught in parse:
// after a help or a version kingpin would go on parsing, and nothing may
// run after it has said it is done.
type terminated int

// newApp is the command line: a fresh kingpin application each time (no
// package-level state), writing to the process's streams, with every
// command registered.
func newApp(p *proc) (*kingpin.Application, map[string]command) {
	a := kingpin.New("watchdogd", appHelp).UsageWriter(p.stdout).ErrorWriter(p.stderr).
		Terminate(func(code int) { panic(terminated(code)) })
	a.HelpFlag.Short('h')
	a.Version(versionLine(p.version))
	a.Author("watchdogd")
	a.UsageTemplate(usageTemplate)
	a.UsageFuncs(template.FuncMap{"manHelp": manHelp})
	logFlags(a, &p.log)
	a.PreAction(generators(a, p.stdout))
	cmds := map[string]command{}
	for _, e := range commands() {
		register(a, e, "", cmds)
	}
	return a, cmds
}

// Options are a parsed command line: the command, its name as the user
// wrote it ("episodes show"), and the process it runs in.
type Options struct {
	Name string
	Cmd  command
	Proc proc
}

// parse turns a command line into Options. On a usage problem it prints
// one line, on a help or a version what was asked for, and returns
// ok=false with the exit code.
func parse(args []string, p proc) (o Options, code int, ok bool) {
	a, cmds := newApp(&p)
	if len(args) == 0 { // the help, on stderr: a mistake, exit 2
		a.UsageWriter(p.stderr)
		_, _, _, _ = parseApp(a, []string{"--help"})
		return o, exitUsage, false
	}
	name, code, done, err := parseApp(a, args)
	if done {
		return o, code, false
	}
	if err == nil {
		err = checkLog(p.log)
	}
	if err == nil {
		o = Options{Name: name, Cmd: cmds[name], Proc: p}
		err = o.Cmd.check(p)
	}
	if err != nil {
		if name == "" {
			name = selected(a, args)
		}
		prog := strings.TrimSpace("watchdogd " + name)
		if check := o.Cmd != nil; check && !errors.As(err, new(usageError)) { // the environment, not the command line
			fmt.Fprintf(p.stderr, "%s: %s\n", prog, term.OneLine(err))
			return o, exitFailure, false
		}
		// What the user typed is in it: escaped, so that it stays one line.
		fmt.Fprintf(p.stderr, "%s: %s (see %s --help)\n", prog, term.Escape(usageLine(err, a, name)), prog)
		return o, exitUsage, false
	}
	return o, exitOK, true
}

// parseApp runs kingpin's parse, catching its Terminate: done when it
// printed a help, a version or a completion and exited with code.
func parseApp(a *kingpin.Application, args []string) (name string, code int, done bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, ok := r.(terminated)
			if !ok {
				panic(r)
			}
			code, done = int(t), true
		}
	}()
	name, err = a.Parse(args)
	return name, 0, false, err
}

// selected is the command a line that failed to parse names, as far as
// it does ("" for none).
func selected(a *kingpin.Application, args []string) string {
	ctx, _ := a.ParseContext(args)
	if ctx == nil || ctx.SelectedCommand == nil {
		return ""
	}
	return ctx.SelectedCommand.FullCommand()
}
