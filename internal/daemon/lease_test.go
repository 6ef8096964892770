package daemon

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

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

// TestLeaseRepliesApplyInOrder: a refusal sent while another replica's
// lease was still current, whose reply is held back until after a later
// renewal took the lapsed lease, must not end the leadership that renewal
// began. Over a slow link the refusal's two round trips let exactly this
// happen (TestHA at 40 ms logged "became leader", "not leader" naming
// itself, "became leader"). The first reply is held until the second
// renewal has finished or, when renewals wait their turn, for a second.
func TestLeaseRepliesApplyInOrder(t *testing.T) {
	st, err := ledger.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ctx := context.Background()
	if _, ok, err := st.AcquireLease(ctx, leaseName, "other", 300*time.Millisecond); err != nil || !ok {
		t.Fatalf("the other replica's lease: held %v, %v", ok, err)
	}
	core, logs := observer.New(zap.InfoLevel)
	var calls atomic.Int32
	firstIn, hold, secondIn := make(chan struct{}), make(chan struct{}), make(chan struct{})
	k := &leaseKeeper{store: func() *ledger.Store { return st }, holder: "me", ttl: time.Hour, log: zap.New(core),
		acquire: func(s *ledger.Store, ctx context.Context, name, holder string, ttl time.Duration) (ledger.Lease, bool, error) {
			l, ok, err := s.AcquireLease(ctx, name, holder, ttl)
			if calls.Add(1) == 1 {
				close(firstIn)
				<-hold
			} else {
				close(secondIn)
			}
			return l, ok, err
		}}
	doneA, doneB := make(chan struct{}), make(chan struct{})
	go func() { defer close(doneA); k.Renew(ctx) }()
	<-firstIn // refused: "other" still holds the lease
	for {
		l, err := st.ReadLease(ctx, leaseName)
		if err != nil {
			t.Fatal(err)
		}
		if !l.Current() {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	go func() { defer close(doneB); k.Renew(ctx) }()
	select {
	case <-secondIn:
		<-doneB
	case <-time.After(time.Second):
	}
	close(hold)
	<-doneA
	<-doneB
	if !k.Held() {
		t.Error("the refusal, sent first and answered last, ended the leadership the later renewal began")
	}
	if n := logs.FilterMessage("not leader").Len(); n != 0 {
		t.Errorf("logged %q %d times", "not leader", n)
	}
	if n := logs.FilterMessage("became leader").Len(); n != 1 {
		t.Errorf("logged %q %d times, want 1", "became leader", n)
	}
}
