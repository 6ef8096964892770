package app

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/kandevtime"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/slack"
	"github.com/watchdogd/watchdogd/internal/term"
)

// The operator commands work on the ledger a running daemon uses: the tools
// for the person paged at 3 a.m., like amtool.

func openLedger(ctx context.Context, opts Options) (*config.Config, *ledger.Store, error) {
	cfg, err := loadConfig(opts)
	if err != nil {
		return nil, nil, err
	}
	url, err := stateURL(cfg)
	if err != nil {
		return nil, nil, err
	}
	st, err := ledger.OpenExisting(ctx, url)
	if errors.Is(err, ledger.ErrNoLedger) {
		return nil, nil, fmt.Errorf("%w; the daemon creates it on its first start (is --config the daemon's config?)", err)
	}
	return cfg, st, err
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

func runSilence(ctx context.Context, opts Options) error {
	var add ledger.Silence
	if opts.Sub == "add" { // the arguments first: a typo needs no ledger
		var err error
		if add, err = silenceArgs(opts); err != nil {
			return err
		}
	}
	_, st, err := openLedger(ctx, opts)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	now := opts.now()
	switch opts.Sub {
	case "add":
		add.CreatedAt, add.Until = now, now.Add(opts.For)
		if err := st.AddSilence(ctx, add); err != nil {
			return err
		}
		_, err = fmt.Fprintln(opts.Stdout, add.ID)
		return err
	case "list":
		all, err := st.Silences(ctx, now, opts.All)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(opts.Stdout, 0, 4, 2, ' ', 0)
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
	case "expire":
		ok, err := st.ExpireSilence(ctx, opts.ID, now)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("no active silence %q", opts.ID)
		}
		_, err = fmt.Fprintf(opts.Stdout, "expired %s\n", opts.ID)
		return err
	}
	return usageError("silence: want add, list or expire")
}

// silenceArgs checks silence add's arguments.
func silenceArgs(opts Options) (ledger.Silence, error) {
	m, err := parseMatch(opts.Match)
	if err != nil {
		return ledger.Silence{}, err
	}
	if opts.For <= 0 {
		return ledger.Silence{}, usageError("silence add needs --for (like 2h)")
	}
	// As amtool requires: whoever finds the silence next needs the why.
	if strings.TrimSpace(opts.Comment) == "" {
		return ledger.Silence{}, usageError(`silence add needs --comment "why" (whoever finds the silence next needs to know)`)
	}
	return ledger.Silence{ID: uuid.NewString()[:8], WorkspaceID: m.WorkspaceID, TaskID: m.TaskID, SessionID: m.SessionID, Kind: m.Kind,
		Comment: opts.Comment, CreatedBy: opts.Author}, nil
}

func matchText(s ledger.Silence) string {
	var parts []string
	for _, kv := range [][2]string{{"workspace_id", s.WorkspaceID}, {"task_id", s.TaskID}, {"session_id", s.SessionID}, {"kind", string(s.Kind)}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	return strings.Join(parts, ",")
}

func runEpisodes(ctx context.Context, opts Options) error {
	cfg, st, err := openLedger(ctx, opts)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	now := opts.now()
	switch opts.Sub {
	case "list":
		return listEpisodes(ctx, opts, st, now)
	case "show":
		e, err := st.Episode(ctx, opts.ID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no episode %q (watchdogd episodes list shows their ids)", opts.ID)
		}
		if err != nil {
			return err
		}
		return showEpisode(opts.Stdout, e, now)
	case "resolve":
		return resolveEpisode(ctx, opts, cfg, st, now)
	case "retry":
		return retryEpisodes(ctx, opts, st, now)
	}
	return usageError("episodes: want list, show, resolve or retry")
}

// listEpisodes prints the newest episodes, one line each; a cut list says
// so on stderr, after the table, so that a pipe reading stdout is not fooled
// into taking the newest for all.
func listEpisodes(ctx context.Context, opts Options, st *ledger.Store, now time.Time) error {
	if opts.Limit < 0 {
		return usageError("--limit must be 0 (all) or more")
	}
	eps, err := st.Episodes(ctx, opts.Open, opts.Limit)
	if err != nil {
		return err
	}
	if opts.Limit > 0 && len(eps) > opts.Limit {
		eps = eps[:opts.Limit]
		defer fmt.Fprintf(opts.Stderr, "showing the newest %d; --limit 0 lists them all\n", opts.Limit)
	}
	tw := tabwriter.NewWriter(opts.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSESSION\tTASK\tAGE\tSTATE")
	for _, e := range eps {
		state := "open"
		if !e.Open() {
			state = "resolved: " + e.Resolution
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.Kind, term.Escape(e.SessionID), term.Escape(e.TaskTitle), scan.HumanAge(now.Sub(e.Since)), term.Escape(state))
	}
	return tw.Flush()
}

// resolveEpisode closes one open episode by hand, through the same decision
// as a cycle's (so its Slack message is edited by the daemon's next
// delivery), and tells the operator how to keep it from reopening.
func resolveEpisode(ctx context.Context, opts Options, cfg *config.Config, st *ledger.Store, now time.Time) error {
	var resolved *model.Episode
	_, _, err := st.Decide(ctx, func(s model.Ledger) (model.Plan, error) {
		in := policy.Input{Now: now, Policies: cfg.Policy, Routing: cfg.Routing(), Reason: func(model.Episode) string { return "resolved by hand" }}
		var p model.Plan
		p, resolved = policy.ForceResolve(s, opts.ID, in)
		renderer(cfg).Freeze(&p, s, scan.Report{}, now)
		return p, nil
	})
	if err != nil {
		return err
	}
	if resolved == nil {
		return fmt.Errorf("no open episode %q", opts.ID)
	}
	// Resolving does not mute: a finding kandev still shows is a new
	// episode at the next cycle, announced again (on today's route).
	flag := ""
	if opts.ConfigFile != "" {
		flag = " --config " + opts.ConfigFile
	}
	_, err = fmt.Fprintf(opts.Stdout, "resolved %s; a running daemon edits its Slack message.\n"+
		"If kandev still shows the finding, the next cycle opens a new episode and announces it; to stop that, add a silence:\n"+
		"  watchdogd silence add%s --match session_id=%s --for 2h --comment \"…\"\n", opts.ID, flag, term.Escape(resolved.SessionID))
	return err
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
	return tw.Flush()
}

// runNotifyTest posts one test message through the configured route, to
// prove the token and the channel.
func runNotifyTest(ctx context.Context, opts Options) error {
	cfg, err := loadConfig(opts)
	if err != nil {
		return err
	}
	if cfg.Slack == nil {
		return fmt.Errorf("no slack: block in the config")
	}
	tok, err := secret(opts.Getenv, "WATCHDOGD_SLACK_TOKEN", cfg.Slack.TokenFile)
	if err != nil {
		return err
	}
	channel, _ := policy.Route(*cfg.Routing(), model.Episode{WorkspaceID: opts.Workspace})
	if channel == "" {
		return fmt.Errorf("no Slack route for workspace %q and no slack.default_channel", opts.Workspace)
	}
	s := slack.NewClient(tok, cfg.Slack.APIURL, cfg.Slack.Timeout)
	ts, err := s.Test(ctx, channel, fmt.Sprintf("watchdogd notify-test at %s: this channel receives watchdogd's alerts.", time.Now().UTC().Format(time.RFC3339)))
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(opts.Stdout, "posted to %s (ts %s)\n", channel, ts); err != nil {
		return err
	}
	// A delivery whose answer was lost is settled by looking for it in the
	// channel's history; without that scope it could neither be found nor
	// safely re-posted.
	if err := s.ReadHistory(ctx, channel); err != nil {
		return fmt.Errorf("the bot cannot read the channel's history, which settling an interrupted delivery needs (scopes channels:history, groups:history for private channels): %w", err)
	}
	_, err = fmt.Fprintf(opts.Stdout, "read %s's history: ok\n", channel)
	return err
}
