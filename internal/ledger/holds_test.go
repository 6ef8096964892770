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
