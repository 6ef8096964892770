package cycle

import (
	"context"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/metrics"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/notify/webhook"
)

// keepHolds ends the holds on webhooks the config no longer names at the
// URL they were closed at (an operator changed the URL: the new one is
// open, and the old key is another destination), then sets the gauge of
// closed destinations (ObserveHolds).
func (c *Cycle) keepHolds(ctx context.Context) {
	keep := make([]string, 0, len(c.Config.Webhooks))
	for _, h := range c.Config.Webhooks {
		keep = append(keep, webhook.DestinationKey(h))
	}
	ended, err := c.Store.Release(ctx, string(model.ActionWebhook), keep)
	if err != nil {
		c.Log.Warn("end the holds on webhooks whose URL changed", zap.Error(err))
	}
	for _, h := range ended {
		c.Log.Info("webhook reopened: the config names it at another URL, or not at all", zap.String("webhook", notify.DestinationName(h.Destination)))
	}
	c.ObserveHolds(ctx)
}

// ObserveHolds sets the gauge of closed destinations from the ledger,
// where another replica or `watchdogd episodes retry` may have changed
// them (a standby sets it too, so that it never reports a closure the
// leader ended).
func (c *Cycle) ObserveHolds(ctx context.Context) {
	holds, err := c.Store.Holds(ctx, c.Now())
	if err != nil {
		c.Log.Warn("closed destinations' gauge not updated", zap.Error(err))
		return
	}
	counts := map[string]int{}
	for _, h := range holds {
		counts[h.Outlet]++
	}
	for _, o := range metrics.ClosableOutlets {
		c.Metrics.DestinationsClosed.WithLabelValues(o).Set(float64(counts[o]))
	}
}
