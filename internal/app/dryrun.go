package app

import (
	"context"
	"fmt"
	"io"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/term"
)

// DryRun scans and decides exactly as Run would, then prints the decision
// and what would be sent. It writes nothing to the ledger and sends nothing.
func (c *Cycle) DryRun(ctx context.Context, w io.Writer) error {
	now := c.Now()
	rep, snap, err := c.scan(ctx, now)
	if err != nil {
		return err
	}
	in := c.policyInput(rep, now)
	st, err := c.Store.PeekFor(ctx, func(st model.Ledger) []string { return policy.Wanted(st, in) })
	if err != nil {
		return err
	}
	in.Reason = c.reasons(ctx, snap, rep, st)
	p := policy.Decide(st, in)
	render(&p, st, rep, c.Config, now)
	fmt.Fprintf(w, "Dry run at %s: %d active sessions, %d findings, %d open episodes. Nothing is written or sent.\n\n",
		rep.ScannedAt, len(rep.Sessions), len(rep.Findings), len(st.Open))
	// What kandev holds is escaped for the terminal (%q escapes too).
	for _, e := range p.Open {
		fmt.Fprintf(w, "would open   %s on %q (session %s)\n", e.Kind, e.TaskTitle, term.Escape(e.SessionID))
	}
	for _, r := range p.Resolve {
		fmt.Fprintf(w, "would resolve episode %s: %s\n", r.ID, term.Escape(r.Reason))
	}
	existing := map[string]bool{}
	episodes := map[string]model.Episode{}
	for _, e := range append(st.Open, p.Open...) {
		episodes[e.ID] = e
		for _, a := range e.Actions {
			existing[a.Key] = true
		}
	}
	con := notify.NewConsole(w)
	printed := 0
	for _, a := range p.Actions {
		if existing[a.Key] {
			continue
		}
		printed++
		fmt.Fprintln(w)
		if err := printAction(ctx, w, con, a, episodes[a.EpisodeID]); err != nil {
			return err
		}
	}
	if printed == 0 {
		fmt.Fprintln(w, "\nNo new action is due.")
	}
	return nil
}

// printAction shows one decided action through the console notifier.
func printAction(ctx context.Context, w io.Writer, con *notify.Console, a model.Action, e model.Episode) error {
	switch a.Kind {
	case model.ActionSlack, model.ActionSlackUpdate:
		m, err := notify.DecodeMessage(a.Body)
		if err != nil {
			return err
		}
		thread := ""
		if a.ParentKey != "" {
			thread = "(thread of " + a.ParentKey[:8] + ")"
		}
		if a.Kind == model.ActionSlackUpdate {
			return con.Update(ctx, a.Channel, thread, m)
		}
		_, err = con.Post(ctx, a.Channel, thread, a.Key, m)
		return err
	case model.ActionNudge, model.ActionCancelAndNudge:
		if a.Kind == model.ActionCancelAndNudge {
			_ = con.Cancel(ctx, e.SessionID)
		}
		return con.AddMessage(ctx, e.TaskID, e.SessionID, decodeText(a.Body), "")
	}
	_, err := fmt.Fprintf(w, "→ log: %s\n", term.EscapeLines(decodeText(a.Body)))
	return err
}
