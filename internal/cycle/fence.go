package cycle

import (
	"context"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// deliverer is the delivery protocol over this cycle's outlets and ledger.
func (c *Cycle) deliverer() *notify.Deliverer {
	return &notify.Deliverer{Store: c.Store, Outlets: c.Outlets, Fence: c.Fence, Log: c.Log, Metrics: c.Metrics, Now: c.Now,
		Holder: c.Holder, ClaimTTL: c.Config.State.ClaimTTL, Quiet: c.Config.QuietHours, MayAct: c.MayAct}
}

// Fence re-checks in kandev, right before sending, that the episode still
// holds: the finding with its identity on a fresh read of its task, as it
// holds now (its kind may have changed: a question kandev hid or shows
// again), or nil when it no longer holds.
func (c *Cycle) Fence(ctx context.Context, e model.Episode) (*scan.Finding, error) {
	snap, err := c.ReadTask(ctx, e.TaskID)
	if err != nil {
		return nil, err
	}
	return c.Current(snap, e), nil
}

// ReadTask reads one task's sessions from kandev, within
// database.scan_timeout: a read that hangs must not hold up the delivery
// of every action after it.
func (c *Cycle) ReadTask(ctx context.Context, taskID string) (*model.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Config.Database.ScanTimeout)
	defer cancel()
	return c.Reader.TaskSnapshot(ctx, taskID)
}

// Current is episode e's finding in snap, nil when snap does not show it.
func (c *Cycle) Current(snap *model.Snapshot, e model.Episode) *scan.Finding {
	for _, f := range Findings(snap, c.Config, c.Now()).Findings {
		if policy.Identity(f) == e.Identity {
			return &f
		}
	}
	return nil
}
