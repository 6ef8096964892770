package app

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/ledger"
)

// TestLeaseStepsDown: a leader that may no longer lead (its cycles keep
// failing) gives the lease up at its next renewal, so another replica
// takes it at once instead of after the lease lapses; while it may not
// lead it never takes a free lease, and once it may again it contends as
// usual. Two keepers on one real SQLite ledger.
func TestLeaseStepsDown(t *testing.T) {
	st, err := ledger.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	var aMay atomic.Bool
	aMay.Store(true)
	var aLeads atomic.Bool
	a := &leaseKeeper{store: func() *ledger.Store { return st }, holder: "a", ttl: time.Hour, log: zap.NewNop(),
		mayLead: aMay.Load, onLeads: aLeads.Store}
	b := &leaseKeeper{store: func() *ledger.Store { return st }, holder: "b", ttl: time.Hour, log: zap.NewNop()}
	ctx := context.Background()

	a.Renew(ctx)
	b.Renew(ctx)
	if !a.Held() || b.Held() || !aLeads.Load() {
		t.Fatalf("a held %v (reported %v), b held %v; want a to lead", a.Held(), aLeads.Load(), b.Held())
	}
	aMay.Store(false)
	a.Renew(ctx)
	if a.Held() || aLeads.Load() {
		t.Fatal("a still leads after it may not")
	}
	// The lease (an hour long) was released, not left to lapse.
	b.Renew(ctx)
	if !b.Held() {
		t.Fatal("b could not take the lease a gave up")
	}
	// A free lease is not taken by a replica that may not lead.
	b.Release(ctx)
	a.Renew(ctx)
	if a.Held() {
		t.Fatal("a took the lease while it may not lead")
	}
	if l, err := st.ReadLease(ctx, leaseName); err != nil || l.Current() {
		t.Fatalf("lease %+v (err %v): want free", l, err)
	}
	aMay.Store(true)
	a.Renew(ctx)
	if !a.Held() || !aLeads.Load() {
		t.Fatal("a could not lead again once it may")
	}
}
