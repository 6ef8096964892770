package cycle

import (
	"context"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/metrics"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/notify/registry"
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

// ObserveHolds sets the gauges of closed destinations and of lanes
// (watchdogd_lane_up) from the ledger, where another replica or
// `watchdogd episodes retry` may have changed them (a standby sets them
// too, so that it never reports a hold the leader ended).
func (c *Cycle) ObserveHolds(ctx context.Context) {
	holds, err := c.Store.Holds(ctx, time.Time{}) // a breaker past its backoff is down until its probe answers
	if err != nil {
		c.Log.Warn("closed destinations' and lanes' gauges not updated", zap.Error(err))
		return
	}
	counts := map[string]int{}
	held := make([]metrics.LaneKey, 0, len(holds))
	for _, h := range holds {
		if h.Gone() {
			counts[h.Outlet]++
		}
		held = append(held, metrics.LaneKey{Outlet: h.Outlet, Destination: h.Destination})
	}
	for _, o := range metrics.ClosableOutlets {
		c.Metrics.DestinationsClosed.WithLabelValues(o).Set(float64(counts[o]))
	}
	c.Metrics.ObserveLanes(c.NamedLanes(), held)
}

// NamedLanes are the lanes the config names, by their key in the
// ledger's holds, with the destination label watchdogd_lane_up gives
// each: Slack's channels (its default and its routes'), each webhook by
// name, each Alertmanager member by its index in alertmanager.urls, and
// kandev.
func (c *Cycle) NamedLanes() map[metrics.LaneKey]string {
	named := map[metrics.LaneKey]string{{Outlet: registry.Kandev, Destination: registry.Kandev}: registry.Kandev}
	if s := c.Config.Slack; s != nil {
		for _, ch := range append([]string{s.DefaultChannel}, routeChannels(s.Routes)...) {
			if ch != "" {
				named[metrics.LaneKey{Outlet: registry.Slack, Destination: ch}] = ch
			}
		}
	}
	for _, h := range c.Config.Webhooks {
		named[metrics.LaneKey{Outlet: registry.Webhook, Destination: webhook.DestinationKey(h)}] = h.Name
	}
	if am := c.Config.Alertmanager; am != nil {
		for i := range am.URLs {
			named[metrics.LaneKey{Outlet: registry.Alertmanager, Destination: strconv.Itoa(i)}] = strconv.Itoa(i)
		}
	}
	return named
}

func routeChannels(routes []model.Route) []string {
	out := make([]string, 0, len(routes))
	for _, r := range routes {
		out = append(out, r.Channel)
	}
	return out
}
