package daemon

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/notify/alertmanager"
)

// alertsOf is the Alertmanager outlet among a cycle's outlets, nil when
// the config has none.
func alertsOf(reg notify.Registry) *alertmanager.Outlet {
	o, _ := reg[model.ActionAlertmanager].Outlet.(*alertmanager.Outlet)
	return o
}

// resendAlerts sends every open episode's alert again each
// alertmanager.resend_interval, on the leader, on a timer of its own: not
// after each cycle, so that a watchdog whose scans fail (or hang) keeps its
// alerts alive in Alertmanager, which would otherwise resolve them after
// its resolve_timeout although nothing was resolved. The scan failing has
// an alert of its own.
func (d *daemon) resendAlerts(ctx context.Context) {
	for {
		interval := time.Minute
		if a := d.cfg.Load().Alertmanager; a != nil {
			interval = a.ResendInterval
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
		d.resendOnce(ctx)
	}
}

// resendOnce is one resend, on the leader, when the config has an
// alertmanager: block and the ledger is open.
func (d *daemon) resendOnce(ctx context.Context) {
	o, st := d.alerts.Load(), d.store.Load()
	if o == nil || st == nil || !d.status.isLeader() {
		return
	}
	n, err := o.Resend(ctx, st, time.Now())
	if err != nil {
		d.m.AlertResends.WithLabelValues("error").Inc()
		d.log.Warn("resend alerts to Alertmanager", zap.Int("sent", n), zap.Error(err))
		return
	}
	d.m.AlertResends.WithLabelValues("success").Inc()
	d.log.Debug("resent alerts to Alertmanager", zap.Int("alerts", n))
}

func (s *status) isLeader() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.leader
}
