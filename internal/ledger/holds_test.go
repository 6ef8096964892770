package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
)

// TestDestinationHolds: a hold is read back by outlet and destination
// while it holds (until released, or until its end), another outlet's
// destination of the same key is apart, holding again keeps when it began,
// and Release ends the outlet's holds but those kept. On each dialect.
func TestDestinationHolds(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			s, err := ledger.Open(ctx, d.url(t))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			gone := model.Hold{Outlet: "webhook", Destination: "ops#0011223344556677", Reason: "its receiver answered 410 Gone", Since: now}
			for _, h := range []model.Hold{gone, {Outlet: "webhook", Destination: "audit#8899", Reason: "x", Since: now, Until: now.Add(time.Minute)},
				{Outlet: "slack", Destination: "ops#0011223344556677", Reason: "y", Since: now}} {
				if err := s.Hold(ctx, h); err != nil {
					t.Fatal(err)
				}
			}
			if h, held, err := s.HoldOf(ctx, "webhook", gone.Destination, now.Add(24*time.Hour)); err != nil || !held || h != gone {
				t.Fatalf("hold %+v held %v: %v", h, held, err)
			}
			if _, held, _ := s.HoldOf(ctx, "webhook", "audit#8899", now.Add(2*time.Minute)); held {
				t.Fatal("a hold past its end still holds")
			}
			if _, held, _ := s.HoldOf(ctx, "webhook", "nothing#00", now); held {
				t.Fatal("a destination never held holds")
			}
			again := gone
			again.Since, again.Reason = now.Add(time.Hour), "its receiver answered 410 Gone again"
			if err := s.Hold(ctx, again); err != nil {
				t.Fatal(err)
			}
			if h, _, _ := s.HoldOf(ctx, "webhook", gone.Destination, now); !h.Since.Equal(now) || h.Reason != again.Reason {
				t.Fatalf("held again: %+v, want the first since and the new reason", h)
			}
			if all, err := s.Holds(ctx, now.Add(2*time.Minute)); err != nil || len(all) != 2 {
				t.Fatalf("holds at +2m: %+v %v, want the webhook's and slack's", all, err)
			}
			ended, err := s.Release(ctx, "webhook", []string{"audit#8899"})
			if err != nil || len(ended) != 1 || ended[0].Destination != gone.Destination {
				t.Fatalf("released %+v: %v", ended, err)
			}
			if all, _ := s.Holds(ctx, now); len(all) != 2 || all[0].Outlet != "slack" || all[1].Destination != "audit#8899" {
				t.Fatalf("after the release: %+v", all)
			}
		})
	}
}

// TestBreakerHolds: a breaker's hold is read back past its end (not
// holding: its lane probes), exactly one of two probes takes it and moves
// its end, Unhold ends it, and neither a breaker's hold nor Unhold reopens
// a destination gone for good. On each dialect.
func TestBreakerHolds(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			s, err := ledger.Open(ctx, d.url(t))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			b := model.Hold{Outlet: "slack", Destination: "C-ops", Reason: "timeout", Since: now, Until: now.Add(5 * time.Second), Failures: 1}
			if err := s.Hold(ctx, b); err != nil {
				t.Fatal(err)
			}
			if h, held, err := s.HoldOf(ctx, "slack", "C-ops", now.Add(time.Second)); err != nil || !held || h != b {
				t.Fatalf("inside its backoff: %+v held %v: %v, want %+v", h, held, err, b)
			}
			if ok, err := s.Probe(ctx, "slack", "C-ops", now.Add(time.Second), now.Add(time.Minute)); err != nil || ok {
				t.Fatalf("a probe inside the backoff was taken (%v, %v)", ok, err)
			}
			later := now.Add(6 * time.Second)
			if h, held, _ := s.HoldOf(ctx, "slack", "C-ops", later); held || h.Failures != 1 || h.Since != now {
				t.Fatalf("past its end: %+v held %v, want it read back, not holding", h, held)
			}
			first, err1 := s.Probe(ctx, "slack", "C-ops", later, later.Add(2*time.Second))
			second, err2 := s.Probe(ctx, "slack", "C-ops", later, later.Add(2*time.Second))
			if err1 != nil || err2 != nil || !first || second {
				t.Fatalf("two probes: %v %v (%v %v), want exactly the first", first, second, err1, err2)
			}
			if _, held, _ := s.HoldOf(ctx, "slack", "C-ops", later.Add(time.Second)); !held {
				t.Fatal("a probe in flight does not hold the lane for the others")
			}
			if err := s.Unhold(ctx, "slack", "C-ops"); err != nil {
				t.Fatal(err)
			}
			if h, held, _ := s.HoldOf(ctx, "slack", "C-ops", later); held || !h.Since.IsZero() {
				t.Fatalf("after Unhold: %+v held %v", h, held)
			}
			gone := model.Hold{Outlet: "webhook", Destination: "ops#00", Reason: "410 Gone", Since: now}
			if err := s.Hold(ctx, gone); err != nil {
				t.Fatal(err)
			}
			if err := s.Hold(ctx, model.Hold{Outlet: "webhook", Destination: "ops#00", Reason: "timeout", Since: now, Until: now.Add(time.Second), Failures: 1}); err != nil {
				t.Fatal(err)
			}
			if err := s.Unhold(ctx, "webhook", "ops#00"); err != nil {
				t.Fatal(err)
			}
			if ok, _ := s.Probe(ctx, "webhook", "ops#00", later, later.Add(time.Second)); ok {
				t.Fatal("a destination gone for good was probed")
			}
			if h, held, _ := s.HoldOf(ctx, "webhook", "ops#00", later.Add(time.Hour)); !held || h != gone {
				t.Fatalf("gone, after a breaker's hold and Unhold: %+v held %v, want %+v", h, held, gone)
			}
		})
	}
}
