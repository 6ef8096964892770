package ledger_test

import (
	"context"
	"testing"
	"time"
)

// TestLease: one holder at a time; renewals keep the term; an expired lease
// changes hands with a new term; a released one is free at once.
func TestLease(t *testing.T) {
	ctx := context.Background()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			url := d.url(t)
			a, b := open(t, url), open(t, url)
			la, ok, err := a.AcquireLease(ctx, "leader", "a", 400*time.Millisecond)
			if err != nil || !ok || la.Term != 1 {
				t.Fatalf("a: %+v %v %v", la, ok, err)
			}
			if lb, ok, err := b.AcquireLease(ctx, "leader", "b", 400*time.Millisecond); err != nil || ok || lb.Holder != "a" || !lb.Current() {
				t.Fatalf("b took a current lease: %+v %v %v", lb, ok, err)
			}
			if la, ok, _ = a.AcquireLease(ctx, "leader", "a", 400*time.Millisecond); !ok || la.Term != 1 {
				t.Fatalf("renewal: %+v %v", la, ok)
			}
			time.Sleep(500 * time.Millisecond)
			lb, ok, err := b.AcquireLease(ctx, "leader", "b", 400*time.Millisecond)
			if err != nil || !ok || lb.Term != 2 {
				t.Fatalf("b after expiry: %+v %v %v", lb, ok, err)
			}
			if _, ok, _ := a.AcquireLease(ctx, "leader", "a", 400*time.Millisecond); ok {
				t.Fatal("a renewed a lease b holds")
			}
			if err := b.ReleaseLease(ctx, "leader", "b"); err != nil {
				t.Fatal(err)
			}
			if la, ok, _ := a.AcquireLease(ctx, "leader", "a", 400*time.Millisecond); !ok || la.Term != 3 {
				t.Fatalf("after release: %+v %v", la, ok)
			}
		})
	}
}
