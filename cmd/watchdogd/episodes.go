package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/watchdogd/watchdogd/internal/app"
	"github.com/watchdogd/watchdogd/internal/kandevtime"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
)

// The episodes commands read and act on the daemon's ledger: what was
// found, what was sent, how it ended.

// episodesListCmd is `watchdogd episodes list`: the newest episodes, one
// line each; a cut list says so on stderr, after the table, so that a pipe
// reading stdout is not fooled into taking the newest for all.
type episodesListCmd struct {
	ledgerFlag
	outputFlag
	open  bool
	limit int
}

func (c *episodesListCmd) define(k *kingpin.CmdClause) {
	c.ledgerFlag.define(k)
	c.outputFlag.define(k)
	k.Flag("open", "list open episodes only").BoolVar(&c.open)
	k.Flag("limit", "list at most this many, newest first (0: all)").Default("500").IntVar(&c.limit)
}

func (c *episodesListCmd) check(e proc) error {
	if err := c.resolve(e); err != nil {
		return err
	}
	if c.limit < 0 {
		return usageError("--limit must be 0 (all) or more")
	}
	return c.outputFlag.check()
}

func (c *episodesListCmd) run(ctx context.Context, e proc) error {
	_, st, err := app.OpenLedger(ctx, inputs(c.config, "", e))
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	now := e.now()
	eps, err := st.Episodes(ctx, c.open, c.limit)
	if err != nil {
		return err
	}
	if c.limit > 0 && len(eps) > c.limit {
		eps = eps[:c.limit]
		defer fmt.Fprintf(e.stderr, "showing the newest %d; --limit 0 lists them all\n", c.limit)
	}
	if c.output == "json" {
		items := make([]episodeJSON, 0, len(eps))
		for _, ep := range eps {
			items = append(items, toEpisodeJSON(ep, now))
		}
		return writeOps(e.stdout, "episodes", items)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSESSION\tTASK\tAGE\tSTATE")
	for _, ep := range eps {
		state := "open"
		if !ep.Open() {
			state = "resolved: " + ep.Resolution
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", ep.ID, ep.Kind, term.Escape(ep.SessionID), term.Escape(ep.TaskTitle), scan.HumanAge(now.Sub(ep.Since)), term.Escape(state))
	}
	return tw.Flush()
}

// episodesShowCmd is `watchdogd episodes show ID`.
type episodesShowCmd struct {
	ledgerFlag
	outputFlag
	id string
}

func (c *episodesShowCmd) define(k *kingpin.CmdClause) {
	c.ledgerFlag.define(k)
	c.outputFlag.define(k)
	episodeArg(k, &c.id).Required()
}

func (c *episodesShowCmd) check(e proc) error {
	if err := c.resolve(e); err != nil {
		return err
	}
	return c.outputFlag.check()
}

func (c *episodesShowCmd) run(ctx context.Context, e proc) error {
	_, st, err := app.OpenLedger(ctx, inputs(c.config, "", e))
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	id, err := episodeID(ctx, st, c.id)
	if err != nil {
		return err
	}
	ep, err := st.Episode(ctx, id)
	if err != nil {
		return err
	}
	if c.output == "json" {
		return writeOps(e.stdout, "episodes", []episodeDetailJSON{toEpisodeDetailJSON(ep, e.now())})
	}
	return showEpisode(e.stdout, ep, e.now())
}

// episodeArg declares the ID argument of an episodes subcommand.
func episodeArg(k *kingpin.CmdClause, id *string) *kingpin.ArgClause {
	a := k.Arg("id", fmt.Sprintf("the episode: its id, or the first %d characters or more of it (episodes list shows them)", ledger.MinEpisodePrefix))
	a.StringVar(id)
	return a
}

// episodeID is the episode id, or the unique prefix of one, the user gave:
// the whole id, or a line that says what is wrong.
func episodeID(ctx context.Context, st *ledger.Store, id string) (string, error) {
	full, err := st.EpisodeID(ctx, id)
	if errors.Is(err, ledger.ErrNoEpisode) {
		return "", fmt.Errorf("%w; watchdogd episodes list shows their ids", err)
	}
	return full, err
}

// showEpisode prints one episode and every action decided for it, oldest
// first: what was sent, where, when, and how it ended — the question an
// operator asks of a page ("was this sent, and to whom?").
func showEpisode(w io.Writer, e model.Episode, now time.Time) error {
	state := "open"
	if !e.Open() {
		state = fmt.Sprintf("resolved %s: %s", kandevtime.RFC3339(e.ResolvedAt), e.Resolution)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, kv := range [][2]string{
		{"episode", e.ID}, {"kind", string(e.Kind)}, {"task", fmt.Sprintf("%s (%s), workspace %s", e.TaskTitle, e.TaskID, e.WorkspaceID)},
		{"session", e.SessionID}, {"turn", e.TurnID}, {"pending", e.PendingID},
		{"since", fmt.Sprintf("%s (%s ago)", kandevtime.RFC3339(e.Since), scan.HumanAge(now.Sub(e.Since)))},
		{"state", state},
	} {
		if kv[1] != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", kv[0], term.Escape(kv[1]))
		}
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "SEQ\tACTION\tSTATE\tATTEMPTS\tUPDATED\tWHERE\tERROR")
	for _, a := range e.Actions {
		where := a.Channel
		if a.ResultChannel != "" {
			where = a.ResultChannel + " " + a.ResultTS
		}
		errText := a.Error
		if a.Conflicts > 0 {
			errText = strings.TrimSpace(fmt.Sprintf("%s (%d conflicting decisions)", errText, a.Conflicts))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", a.Seq, a.Kind, a.State, a.Attempts, kandevtime.RFC3339(a.UpdatedAt), term.Escape(where), term.Escape(errText))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return showInteractions(w, e)
}

type episodesResolveCmd struct {
	ledgerFlag
	id string
}

func (c *episodesResolveCmd) define(k *kingpin.CmdClause) {
	c.ledgerFlag.define(k)
	episodeArg(k, &c.id).Required()
}

func (c *episodesResolveCmd) check(e proc) error {
	return c.resolve(e)
}

// episodesResolveCmd is `watchdogd episodes resolve ID`: it closes one open
// episode by hand, through the same decision
// as a cycle's (so its Slack message is edited by the daemon's next
// delivery), and tells the operator how to keep it from reopening.
func (c *episodesResolveCmd) run(ctx context.Context, e proc) error {
	cfg, st, err := app.OpenLedger(ctx, inputs(c.config, "", e))
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	id, err := episodeID(ctx, st, c.id)
	if err != nil {
		return err
	}
	now := e.now()
	renderer, err := app.Renderer(cfg)
	if err != nil {
		return err
	}
	var resolved *model.Episode
	_, _, err = st.Decide(ctx, func(s model.Ledger) (model.Plan, error) {
		in := policy.Input{Now: now, Policies: cfg.Policy, Routing: cfg.Routing(), Reason: func(model.Episode) model.Reason { return model.Because(model.ClearedByHand) },
			Resolves: renderer.Resolves()}
		var p model.Plan
		p, resolved = policy.ForceResolve(s, id, in)
		renderer.Freeze(&p, s, scan.Report{}, now)
		return p, nil
	})
	if err != nil {
		return err
	}
	if resolved == nil {
		return fmt.Errorf("episode %s is resolved already", id)
	}
	// Resolving does not mute: a finding kandev still shows is a new
	// episode at the next cycle, announced again (on today's route).
	_, err = fmt.Fprintf(e.stdout, "resolved %s; a running daemon edits its Slack message.\n"+
		"If kandev still shows the finding, the next cycle opens a new episode and announces it; to stop that, add a silence:\n"+
		"  watchdogd silence add %s%s --duration 2h --comment \"…\"\n", id, c.configBack(), term.Escape(matcherArg(model.Equal("session_id", resolved.SessionID))))
	return err
}

type episodesRetryCmd struct {
	ledgerFlag
	id string
}

func (c *episodesRetryCmd) define(k *kingpin.CmdClause) {
	c.ledgerFlag.define(k)
	episodeArg(k, &c.id) // none: every open episode
}

func (c *episodesRetryCmd) check(e proc) error {
	return c.resolve(e)
}

// episodesRetryCmd is `watchdogd episodes retry [ID]`: the operator fixed
// what made actions fail for good and wants the open episodes nobody was
// told of announced now, not at their next step (an interrupted session
// has no next step). It reopens every closed webhook too (one whose
// receiver answered 410 Gone). A running daemon sends them at its next
// cycle.
func (c *episodesRetryCmd) run(ctx context.Context, e proc) error {
	_, st, err := app.OpenLedger(ctx, inputs(c.config, "", e))
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	id := ""
	if c.id != "" {
		if id, err = episodeID(ctx, st, c.id); err != nil {
			return err
		}
	}
	now := e.now()
	var plan model.Plan
	found := false
	_, _, err = st.Decide(ctx, func(s model.Ledger) (model.Plan, error) {
		plan, found = policy.RetryFailed(s, id, now)
		return plan, nil
	})
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("episode %s is resolved already: nothing to retry", id)
	}
	reopened, err := st.Release(ctx, string(model.ActionWebhook), nil)
	for _, h := range reopened {
		if _, werr := fmt.Fprintf(e.stdout, "reopened webhook %s (closed since %s: %s)\n", term.Escape(notify.DestinationName(h.Destination)),
			h.Since.UTC().Format(time.RFC3339), term.Escape(h.Reason)); werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	if len(plan.Requeue) == 0 && len(reopened) > 0 {
		return nil
	}
	if len(plan.Requeue) == 0 {
		_, err = fmt.Fprintln(e.stdout, "nothing to retry: every open episode has a message delivered or on its way, or none failed")
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "queued %d failed action(s) again; a running daemon sends them at its next cycle\n", len(plan.Requeue))
	return err
}

// matcherArg is m as a shell argument: key=value where that reads back
// as m, else Alertmanager's quoted spelling, quoted for the shell.
func matcherArg(m model.Matcher) string {
	plain := m.Name + string(m.Op) + m.Value
	if back, err := model.ParseMatcher(plain); err == nil && back.Value == m.Value {
		return shellQuote(plain)
	}
	return shellQuote(m.String())
}
