package cycle

import (
	"context"
	"fmt"
	"io"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/console"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/term"
)

// DryRun scans and decides exactly as Run would, then prints the decision
// and what would be sent. It writes nothing to the ledger and sends nothing.
func (c *Cycle) DryRun(ctx context.Context, w io.Writer) error {
	now := c.Now()
	rep, snap, err := c.Scan(ctx, now)
	if err != nil {
		return err
	}
	held, _ := c.clearSilences(ctx, rep)
	in := c.policyInput(policy.Unresolved(rep.Findings, held), now)
	st, err := c.Store.PeekFor(ctx, func(st model.Ledger) []string { return policy.Wanted(st, in) })
	if err != nil {
		return err
	}
	in.Reason = c.reasons(ctx, snap, rep, st)
	p := policy.Decide(st, in)
	c.Freeze(&p, st, rep, now)
	fmt.Fprintf(w, "Dry run at %s: %d active sessions, %d findings, %d open episodes. Nothing is written or sent.\n\n",
		rep.ScannedAt, len(rep.Sessions), len(rep.Findings), len(st.Open))
	// What kandev holds is escaped for the terminal (%q escapes too).
	for _, e := range p.Open {
		fmt.Fprintf(w, "would open   %s on %q (session %s)\n", e.Kind, e.TaskTitle, term.Escape(e.SessionID))
	}
	for _, r := range p.Resolve {
		fmt.Fprintf(w, "would resolve episode %s: %s\n", r.ID, term.Escape(r.Reason.Words()))
	}
	existing := map[string]bool{}
	episodes := map[string]model.Episode{}
	for _, e := range append(st.Open, p.Open...) {
		episodes[e.ID] = e
		for _, a := range e.Actions {
			existing[a.Key] = true
		}
	}
	con := console.New(w, c.Outlets)
	printed := 0
	for _, a := range p.Actions {
		if existing[a.Key] {
			continue
		}
		printed++
		fmt.Fprintln(w)
		parent := "" // nothing is sent in a dry run: a reply or an edit names its first message's key
		if a.ParentKey != "" {
			parent = "(thread of " + a.ParentKey[:min(8, len(a.ParentKey))] + ")"
		}
		if _, err := con.Print(a, episodes[a.EpisodeID], parent); err != nil {
			return err
		}
	}
	if printed == 0 {
		fmt.Fprintln(w, "\nNo new action is due.")
	}
	return nil
}
