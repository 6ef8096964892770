package app

import (
	"context"
	"fmt"
	"time"

	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/policy"
)

// retryEpisodes is `watchdogd episodes retry [ID]`: the operator fixed
// what made actions fail for good and wants the open episodes nobody was
// told of announced now, not at their next step (an interrupted session
// has no next step). A running daemon sends them at its next cycle.
func retryEpisodes(ctx context.Context, opts Options, st *ledger.Store, now time.Time) error {
	var plan model.Plan
	found := false
	_, _, err := st.Decide(ctx, func(s model.Ledger) (model.Plan, error) {
		plan, found = policy.RetryFailed(s, opts.ID, now)
		return plan, nil
	})
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("no open episode %q", opts.ID)
	}
	if len(plan.Requeue) == 0 {
		_, err = fmt.Fprintln(opts.Stdout, "nothing to retry: every open episode has a message delivered or on its way, or none failed")
		return err
	}
	_, err = fmt.Fprintf(opts.Stdout, "queued %d failed action(s) again; a running daemon sends them at its next cycle\n", len(plan.Requeue))
	return err
}
