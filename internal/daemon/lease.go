package daemon

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/ledger"
)

// leaseName is the one leader lease in a ledger.
const leaseName = "leader"

// leaseKeeper holds the leader lease, renewing it on its own timer every
// ttl/3 so that a long cycle never loses it unnoticed. Leadership is judged
// by the local clock conservatively: it ends ttl after the last renewal was
// *sent*, never later than the database's expiry. Exactly-once never
// depends on it — claims do — it only keeps standbys from working.
type leaseKeeper struct {
	store   func() *ledger.Store
	holder  string
	ttl     time.Duration
	log     *zap.Logger
	onLeads func(bool)
	// mayLead, when set, is asked before the lease is taken or renewed. A
	// replica whose cycles keep failing (it cannot read kandev, say) gives
	// the lease up, so that a standby whose scans work leads instead of
	// waiting behind a leader that acts on nothing.
	mayLead func() bool
	// acquire is (*ledger.Store).AcquireLease when nil; tests hold its
	// reply back to deliver replies out of order.
	acquire func(*ledger.Store, context.Context, string, string, time.Duration) (ledger.Lease, bool, error)

	// turn serializes renewals and releases. The keeper's timer and every
	// cycle both renew, and a reply applied after a newer one would undo
	// it: over a slow link a refused take costs two round trips (the
	// upsert that changes nothing, then the read), so a later take that
	// succeeds in one can land first, and the refusal would then end a
	// leadership that had just begun (seen in TestHA at 40 ms: "became
	// leader", "not leader" naming itself, "became leader").
	turn sync.Mutex

	mu        sync.Mutex
	heldUntil time.Time
	last      ledger.Lease
	leading   bool
}

// Held reports whether this replica may act now.
func (k *leaseKeeper) Held() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return time.Now().Before(k.heldUntil)
}

// SeenCurrent reports whether some replica held a current lease at the
// last read (a standby's readiness).
func (k *leaseKeeper) SeenCurrent() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.last.Current()
}

// Renew takes or renews the lease once. It gives up after ttl: a reply
// later than that could not extend the lease, and a renewal that hangs
// must not hold up the cycles waiting their turn.
func (k *leaseKeeper) Renew(ctx context.Context) {
	k.turn.Lock()
	defer k.turn.Unlock()
	st := k.store()
	if st == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, k.ttl)
	defer cancel()
	if k.mayLead != nil && !k.mayLead() {
		k.stepDown(ctx, st)
		return
	}
	acquire := k.acquire
	if acquire == nil {
		acquire = (*ledger.Store).AcquireLease
	}
	sent := time.Now()
	l, ok, err := acquire(st, ctx, leaseName, k.holder, k.ttl)
	k.mu.Lock()
	if err != nil {
		k.log.Warn("renew the leader lease", zap.Error(err))
	} else {
		k.last = l
		if ok {
			k.heldUntil = sent.Add(k.ttl)
		} else {
			k.heldUntil = time.Time{}
		}
	}
	leads := time.Now().Before(k.heldUntil)
	changed := leads != k.leading
	k.leading = leads
	k.mu.Unlock()
	if changed {
		if leads {
			k.log.Info("became leader", zap.Int64("term", l.Term))
		} else {
			k.log.Warn("not leader", zap.String("holder", l.Holder))
		}
	}
	if k.onLeads != nil {
		k.onLeads(leads)
	}
}

// stepDown gives the lease up if this replica holds it, and otherwise
// leaves it alone: a replica that may not lead only reads the lease.
func (k *leaseKeeper) stepDown(ctx context.Context, st *ledger.Store) {
	k.mu.Lock()
	was := k.leading
	k.heldUntil, k.leading = time.Time{}, false
	k.mu.Unlock()
	if was {
		k.log.Warn("stepping down as leader: this replica's cycles keep failing; a replica whose scans work may lead")
		if err := st.ReleaseLease(ctx, leaseName, k.holder); err != nil {
			k.log.Warn("release the leader lease", zap.Error(err))
		}
	}
	if l, err := st.ReadLease(ctx, leaseName); err == nil {
		k.mu.Lock()
		k.last = l
		k.mu.Unlock()
	}
	if k.onLeads != nil {
		k.onLeads(false)
	}
}

// Run renews every ttl/3 until ctx ends.
func (k *leaseKeeper) Run(ctx context.Context) {
	t := time.NewTicker(k.ttl / 3)
	defer t.Stop()
	for {
		k.Renew(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Release gives the lease up (clean shutdown), after any renewal in
// flight, so that renewal cannot take the lease back.
func (k *leaseKeeper) Release(ctx context.Context) {
	k.turn.Lock()
	defer k.turn.Unlock()
	k.mu.Lock()
	k.heldUntil = time.Time{}
	k.mu.Unlock()
	if st := k.store(); st != nil {
		if err := st.ReleaseLease(ctx, leaseName, k.holder); err != nil {
			k.log.Warn("release the leader lease", zap.Error(err))
		}
	}
}
