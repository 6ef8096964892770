package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/google/uuid"

	"github.com/watchdogd/watchdogd/internal/app"
	"github.com/watchdogd/watchdogd/internal/kandevtime"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/term"
)

// The silence commands mute matching episodes on the daemon's ledger, as
// amtool does Alertmanager's, in its spellings.

// silenceAddCmd is `watchdogd silence add MATCHER…`.
type silenceAddCmd struct {
	ledgerFlag
	matchers []string // positional, amtool's way
	match    []string // --match, the flag spelling
	forDur   time.Duration
	comment  string
	author   string
	add      ledger.Silence // what check made of them
}

func (c *silenceAddCmd) define(k *kingpin.CmdClause) {
	c.ledgerFlag.define(k)
	k.Arg("matcher", "what to silence, each of key=value, key!=value, key=~regex or key!~regex (RE2, the whole value), "+
		"keys "+strings.Join(model.MatchKeys, ", ")+"; every one must match").HintOptions(matcherHints()...).StringsVar(&c.matchers)
	k.Flag("match", "a matcher as a flag, the same syntax (repeatable)").PlaceHolder("KEY=VALUE").HintOptions(matcherHints()...).StringsVar(&c.match)
	k.Flag("duration", "how long the silence lasts (like 2h, 90m, 1d)").Short('d').PlaceHolder("2h").DurationVar(&c.forDur)
	k.Flag("for", "the same as --duration").PlaceHolder("2h").DurationVar(&c.forDur)
	k.Flag("comment", "why (required: whoever finds the silence next needs to know)").Short('c').StringVar(&c.comment)
	k.Flag("author", "who (default $USER; required where it is not set, as in the image)").Short('a').StringVar(&c.author)
}

// matcherHints are the completions offered for a matcher: each key, and
// kind with each kind.
func matcherHints() []string {
	var out []string
	for _, k := range model.MatchKeys {
		if k != "kind" {
			out = append(out, k+"=")
		}
	}
	for _, k := range model.Kinds {
		out = append(out, "kind="+string(k))
	}
	return out
}

// check reads the matchers and checks the rest: a typo needs no ledger.
func (c *silenceAddCmd) check(e proc) error {
	if err := c.resolve(e); err != nil {
		return err
	}
	var ms model.Matchers
	for _, s := range append(c.matchers, c.match...) {
		m, err := model.ParseMatcher(s)
		if err != nil {
			return usageError("matcher " + err.Error())
		}
		ms = append(ms, m)
	}
	switch {
	case len(ms) == 0:
		return usageError(`silence add needs a matcher, like kind=stalled_turn or workspace_id=~"ws-pay.*"`)
	case !ms.Selective():
		return usageError(fmt.Sprintf("silence add %s: each matcher also matches an empty value; add one that names what to silence, as Alertmanager requires", ms))
	case c.forDur <= 0:
		return usageError("silence add needs --duration (like 2h)")
	case strings.TrimSpace(c.comment) == "": // as amtool requires
		return usageError(`silence add needs --comment "why" (whoever finds the silence next needs to know)`)
	}
	author := cmp.Or(c.author, e.getenv("USER"))
	if strings.TrimSpace(author) == "" {
		return usageError("silence add needs --author (-a): $USER is not set here")
	}
	c.add = ledger.Silence{ID: uuid.NewString()[:8], Matchers: ms, Comment: c.comment, CreatedBy: author}
	return nil
}

func (c *silenceAddCmd) run(ctx context.Context, e proc) error {
	_, st, err := app.OpenLedger(ctx, inputs(c.config, "", e))
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	now := e.now()
	add := c.add
	add.CreatedAt, add.Until = now, now.Add(c.forDur)
	if err := st.AddSilence(ctx, add); err != nil {
		return err
	}
	_, err = fmt.Fprintln(e.stdout, add.ID)
	return err
}

// silenceQueryCmd is `watchdogd silence query [MATCHER…]` (also
// `silence list`).
type silenceQueryCmd struct {
	ledgerFlag
	outputFlag
	all, quiet bool
	args       []string
	filter     model.Matchers
}

func (c *silenceQueryCmd) define(k *kingpin.CmdClause) {
	c.ledgerFlag.define(k)
	c.outputFlag.define(k)
	k.Flag("all", "list expired silences too").BoolVar(&c.all)
	k.Flag("quiet", "print the ids only, one a line (for: watchdogd silence expire $(watchdogd silence query -q))").Short('q').BoolVar(&c.quiet)
	k.Arg("matcher", "list only the silences these match, as amtool's: each against the value a silence's = matcher gives its key (none: \"\")").
		HintOptions(matcherHints()...).StringsVar(&c.args)
}

func (c *silenceQueryCmd) check(e proc) error {
	if err := c.resolve(e); err != nil {
		return err
	}
	for _, s := range c.args {
		m, err := model.ParseMatcher(s)
		if err != nil {
			return usageError("matcher " + err.Error())
		}
		c.filter = append(c.filter, m)
	}
	return c.outputFlag.check()
}

// selects reports whether the filter keeps silence s: as Alertmanager
// filters silences, every filter matcher must match the value s's
// equality matcher on its key gives ("" where s has none).
func selects(filter model.Matchers, s ledger.Silence) bool {
	for _, f := range filter {
		v, _ := s.Matchers.EqualValue(f.Name)
		if !f.Matches(v) {
			return false
		}
	}
	return true
}

func (c *silenceQueryCmd) run(ctx context.Context, e proc) error {
	_, st, err := app.OpenLedger(ctx, inputs(c.config, "", e))
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	now := e.now()
	all, err := st.Silences(ctx, now, c.all)
	if err != nil {
		return err
	}
	all = slices.DeleteFunc(all, func(s ledger.Silence) bool { return !selects(c.filter, s) })
	switch {
	case c.quiet:
		for _, s := range all {
			fmt.Fprintln(e.stdout, term.Escape(s.ID))
		}
		return nil
	case c.output == "json":
		items := make([]silenceJSON, 0, len(all))
		for _, s := range all {
			items = append(items, toSilenceJSON(s, now))
		}
		return writeOps(e.stdout, "silences", items)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tMATCHERS\tUNTIL\tSTATE\tBY\tCOMMENT")
	for _, s := range all {
		state := "active"
		if !s.Active(now) {
			state = "expired"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", term.Escape(s.ID), term.Escape(s.Matchers.String()), kandevtime.RFC3339(s.Until), state,
			term.Escape(cmp.Or(s.CreatedBy, "-")), term.Escape(s.Comment))
	}
	return tw.Flush()
}

// silenceExpireCmd is `watchdogd silence expire ID…`.
type silenceExpireCmd struct {
	ledgerFlag
	ids []string
}

func (c *silenceExpireCmd) define(k *kingpin.CmdClause) {
	c.ledgerFlag.define(k)
	k.Arg("id", "the silences to end (silence query -q lists the active ones' ids)").Required().StringsVar(&c.ids)
}

func (c *silenceExpireCmd) check(e proc) error {
	return c.resolve(e)
}

// run ends each silence given; those that are not active are named at
// the end, after the others are ended.
func (c *silenceExpireCmd) run(ctx context.Context, e proc) error {
	_, st, err := app.OpenLedger(ctx, inputs(c.config, "", e))
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	var missing []string
	for _, id := range c.ids {
		ok, err := st.ExpireSilence(ctx, id, e.now())
		if err != nil {
			return err
		}
		if !ok {
			missing = append(missing, fmt.Sprintf("%q", id))
			continue
		}
		fmt.Fprintf(e.stdout, "expired %s\n", term.Escape(id))
	}
	if len(missing) > 0 {
		return fmt.Errorf("no active silence %s (silence query lists them)", strings.Join(missing, ", "))
	}
	return nil
}
