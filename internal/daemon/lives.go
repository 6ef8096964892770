package daemon

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/term"
)

// resolvedBatch and resolvedPerTick bound what one tick takes of the
// ledger's resolves for watchdogd_episode_duration_seconds: a leader that
// comes back after a long time without one takes a backlog over a few
// ticks, not in one.
const (
	resolvedBatch   = 5000
	resolvedPerTick = 50000
)

// countResolved counts, on the leader, every resolve the ledger holds
// that no leader counted yet, whichever process resolved it (a cycle, a
// click, `watchdogd episodes resolve`), into the duration histogram: the
// ledger hands each out once (ledger.TakeResolved), so across restarts
// and replicas each is counted once. It runs after the cycle, whether the
// cycle worked or not (kandev may be down while resolves by hand go on).
// `run --once` never counts: its metrics die with it.
func (d *daemon) countResolved(ctx context.Context) {
	st := d.store.Load()
	if st == nil {
		return
	}
	for taken := 0; taken < resolvedPerTick; {
		rs, err := st.TakeResolved(ctx, d.holder, resolvedBatch)
		if err != nil {
			// Once per change of error: the ledger's own alert says more.
			if msg := term.OneLine(err); msg != d.countErr {
				d.log.Warn("episode durations not counted; the next cycle tries again", zap.Error(fmt.Errorf("read the ledger: %w", err)))
				d.countErr = msg
			}
			return
		}
		d.countErr = ""
		for _, r := range rs {
			d.m.Lives.Resolved(r.Seq, r.Kind, r.Cleared, r.Seconds())
		}
		if len(rs) < resolvedBatch {
			return
		}
		taken += len(rs)
	}
}
