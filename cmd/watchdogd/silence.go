package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/watchdogd/watchdogd/internal/app"
	"github.com/watchdogd/watchdogd/internal/kandevtime"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/term"
)

// The silence commands mute matching episodes on the daemon's ledger, as
// amtool does Alertmanager's.

// silenceAddCmd is `watchdogd silence add`.
type silenceAddCmd struct {
	noArgs
	ledgerFlag
	match   []string
	forDur  time.Duration
	comment string
	author  string
}

func (c *silenceAddCmd) flags(fs *flag.FlagSet) {
	c.ledgerFlag.flags(fs)
	fs.Func("match", "key=value to match (workspace_id, task_id, session_id, kind); repeatable", func(v string) error {
		c.match = append(c.match, v)
		return nil
	})
	fs.DurationVar(&c.forDur, "for", 0, "how long the silence lasts (like 2h)")
	fs.DurationVar(&c.forDur, "duration", 0, "the same as --for (amtool's spelling)")
	fs.StringVar(&c.comment, "comment", "", "why (required)")
	fs.StringVar(&c.author, "author", os.Getenv("USER"), "who")
}

func (c *silenceAddCmd) run(ctx context.Context, e proc) error {
	add, err := c.silence() // the arguments first: a typo needs no ledger
	if err != nil {
		return err
	}
	_, st, err := app.OpenLedger(ctx, inputs(c.config, "", e))
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	now := e.now()
	add.CreatedAt, add.Until = now, now.Add(c.forDur)
	if err := st.AddSilence(ctx, add); err != nil {
		return err
	}
	_, err = fmt.Fprintln(e.stdout, add.ID)
	return err
}

// silence checks silence add's arguments.
func (c *silenceAddCmd) silence() (ledger.Silence, error) {
	m, err := parseMatch(c.match)
	if err != nil {
		return ledger.Silence{}, err
	}
	if c.forDur <= 0 {
		return ledger.Silence{}, usageError("silence add needs --for (like 2h)")
	}
	// As amtool requires: whoever finds the silence next needs the why.
	if strings.TrimSpace(c.comment) == "" {
		return ledger.Silence{}, usageError(`silence add needs --comment "why" (whoever finds the silence next needs to know)`)
	}
	return ledger.Silence{ID: uuid.NewString()[:8], Matchers: model.FromMatch(m), Comment: c.comment, CreatedBy: c.author}, nil
}

// silenceListCmd is `watchdogd silence list` (or amtool's `silence
// query`).
type silenceListCmd struct {
	ledgerFlag
	outputFlag
	all bool
}

func (c *silenceListCmd) flags(fs *flag.FlagSet) {
	c.ledgerFlag.flags(fs)
	c.outputFlag.flags(fs)
	fs.BoolVar(&c.all, "all", false, "list expired silences too")
}

func (c *silenceListCmd) args(pos []string) error {
	if err := unexpected(pos); err != nil {
		return err
	}
	return checkOutput(c.output)
}

func (c *silenceListCmd) run(ctx context.Context, e proc) error {
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
	if c.output == "json" {
		items := make([]silenceJSON, 0, len(all))
		for _, s := range all {
			items = append(items, toSilenceJSON(s, now))
		}
		return writeOps(e.stdout, "silences", items)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tMATCH\tUNTIL\tSTATE\tBY\tCOMMENT")
	for _, s := range all {
		state := "active"
		if !s.Active(now) {
			state = "expired"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", term.Escape(s.ID), term.Escape(matchText(s)), kandevtime.RFC3339(s.Until), state,
			term.Escape(cmp.Or(s.CreatedBy, "-")), term.Escape(s.Comment))
	}
	return tw.Flush()
}

// silenceExpireCmd is `watchdogd silence expire ID`.
type silenceExpireCmd struct {
	ledgerFlag
	id string
}

func (c *silenceExpireCmd) args(pos []string) error { return oneID(pos, &c.id) }

func (c *silenceExpireCmd) run(ctx context.Context, e proc) error {
	_, st, err := app.OpenLedger(ctx, inputs(c.config, "", e))
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	ok, err := st.ExpireSilence(ctx, c.id, e.now())
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no active silence %q", c.id)
	}
	_, err = fmt.Fprintf(e.stdout, "expired %s\n", c.id)
	return err
}

// parseMatch reads --match key=value pairs.
func parseMatch(pairs []string) (model.Match, error) {
	var m model.Match
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || v == "" {
			return m, usageError(fmt.Sprintf("--match %q: want key=value", p))
		}
		switch k {
		case "workspace_id":
			m.WorkspaceID = v
		case "task_id":
			m.TaskID = v
		case "session_id":
			m.SessionID = v
		case "kind":
			if !model.Kind(v).Known() {
				return m, usageError(fmt.Sprintf("--match kind=%s: unknown kind (known: %s)", v, model.KindNames()))
			}
			m.Kind = model.Kind(v)
		default:
			return m, usageError(fmt.Sprintf("--match %q: key must be workspace_id, task_id, session_id or kind", p))
		}
	}
	if m == (model.Match{}) {
		return m, usageError("silence add needs at least one --match key=value")
	}
	return m, nil
}

func matchText(s ledger.Silence) string { return s.Matchers.String() }
