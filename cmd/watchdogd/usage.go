package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/alecthomas/kingpin/v2"
)

// usageTemplate is kingpin's default help, each command listed with its
// description and example.
var usageTemplate = kingpin.DefaultUsageTemplate

// manTemplate is kingpin's man page with a header roff reads: the version
// ("watchdogd v1.2.0 (go1.26 linux/amd64)") quoted, as its source, and a
// NAME line that says what the program is, and each command's example
// set as it is typed (manHelp).
var manTemplate = strings.NewReplacer(
	`.TH {{.App.Name}} 1 {{.App.Version}} "{{.App.Author}}"`, `.TH {{.App.Name}} 1 "" "{{.App.Version}}" "User Commands"`,
	".PP\n{{.Help}}\n", ".PP\n{{.Help|manHelp}}\n",
	".SH \"NAME\"\n{{.App.Name}}\n", ".SH \"NAME\"\n{{.App.Name}} \\- keeps kandev's AI-agent sessions from silently rotting\n",
).Replace(kingpin.ManPageTemplate)

// generators writes --help-long, --help-man and the completion scripts to
// w, the process's stdout, and exits 0: kingpin's own write to os.Stdout
// whatever the application's writers, and these run first.
func generators(a *kingpin.Application, w io.Writer) kingpin.Action {
	templates := map[string]string{
		"help-long":              kingpin.LongHelpTemplate,
		"help-man":               manTemplate,
		"completion-script-bash": kingpin.BashCompletionTemplate,
		"completion-script-zsh":  kingpin.ZshCompletionTemplate,
	}
	return func(ctx *kingpin.ParseContext) error {
		for _, el := range ctx.Elements {
			f, ok := el.Clause.(*kingpin.FlagClause)
			if !ok {
				continue
			}
			if t, ok := templates[f.Model().Name]; ok {
				a.UsageWriter(w)
				if err := a.UsageForContextWithTemplate(ctx, 2, t); err != nil {
					return err
				}
				panic(terminated(exitOK))
			}
		}
		return nil
	}
}

// usageLine is kingpin's parse error err in watchdogd's words where they
// say more: the commands there are, the subcommands of a command.
func usageLine(err error, a *kingpin.Application, name string) string {
	msg := err.Error()
	var subs []string
	group := a.Model().CmdGroupModel
	if name != "" {
		if c := a.GetCommand(strings.Fields(name)[0]); c != nil {
			group = c.Model().CmdGroupModel
		}
	}
	for _, c := range group.Commands {
		if !c.Hidden && c.Name != "help" {
			subs = append(subs, c.Name)
		}
	}
	word := "command"
	if name != "" {
		word = "subcommand"
	}
	if got, ok := strings.CutPrefix(msg, "expected command but got "); ok {
		return fmt.Sprintf("unknown %s %s, want one of %s", word, got, strings.Join(subs, ", "))
	}
	if name != "" && !strings.Contains(name, " ") && len(subs) > 0 || strings.HasPrefix(msg, "must select a subcommand of ") {
		return "missing subcommand, one of " + strings.Join(subs, ", ")
	}
	if arg, ok := strings.CutPrefix(msg, "unexpected "); ok && !strings.HasPrefix(arg, "argument ") {
		return fmt.Sprintf("unexpected argument %q", arg)
	}
	return msg
}

// versionLine is what `watchdogd version` and --version print.
func versionLine(v string) string {
	return fmt.Sprintf("watchdogd %s (%s %s/%s)", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// manHelp is a command's help (helpText) for the man page: the
// description filled, the example a line of its own, unfilled, its
// dashes and backslashes escaped so that it pastes as printed.
func manHelp(help string) string {
	desc, example, ok := strings.Cut(help, examplePrefix)
	desc = roffText(desc)
	if !ok {
		return desc
	}
	example = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(example)
	return desc + "\n.PP\n.nf\n.RS\n" + strings.TrimPrefix(examplePrefix, "\n\n") + example + "\n.RE\n.fi"
}

// roffText keeps text from being read as roff: backslashes escaped, and
// no line starting with a request's dot or quote.
func roffText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}
