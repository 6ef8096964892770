package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/app"
	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
)

// stepDownAfter is how many cycles in a row may fail before a leader gives
// the lease up: one more than /readyz tolerates, so a blip of one or two
// failed scans never moves the lease.
const stepDownAfter = 3

// mayLead says whether this replica may take or keep the lease: not after
// stepDownAfter failed cycles in a row, until one succeeds again (a standby
// keeps scanning, so it finds out).
func (d *daemon) mayLead() bool {
	d.status.mu.Lock()
	defer d.status.mu.Unlock()
	return d.status.failures < stepDownAfter
}

func (d *daemon) onLeads(leads bool) {
	v := 0.0
	if leads {
		v = 1
	}
	d.m.Leader.Set(v)
	d.status.setLeader(leads)
}

// parseSchedule reads the schedule with config's panic-safe parser.
func parseSchedule(spec string) (cron.Schedule, error) {
	sched, err := config.ParseSchedule(spec)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: %w", spec, err)
	}
	return sched, nil
}

// schedule (re)installs the cron entry.
func (d *daemon) schedule(sched cron.Schedule) {
	if d.entry != 0 {
		d.sched.Remove(d.entry)
	}
	d.entry = d.sched.Schedule(sched, d.job)
	d.status.mu.Lock()
	d.status.sched = sched
	d.status.mu.Unlock()
}

// tick is one scheduled cycle.
func (d *daemon) tick() {
	d.mu.Lock()
	defer d.mu.Unlock()
	start := time.Now()
	cfg := d.cfg.Load()
	ctx, cancel := context.WithTimeout(d.work, cfg.CycleTimeout)
	defer cancel()
	d.refresh(cfg)
	if err := d.ensureStore(ctx); err != nil {
		// Scan anyway, so that the scan's metrics say whether kandev is
		// readable and the alert that fires names the ledger.
		_, _, _ = d.cycle.Scan(ctx, time.Now())
		d.failed(err, nil, start)
		return
	}
	if d.lease != nil {
		d.lease.Renew(ctx)
		if !d.lease.Held() {
			d.standby(ctx, cfg, start)
			return
		}
	}
	_, err := d.cycle.Run(ctx)
	d.countResolved(ctx)
	if err != nil {
		d.failed(err, d.afterCycle(cfg), start)
		return
	}
	d.m.LastSuccessfulCycle.SetToCurrentTime()
	d.succeeded(d.afterCycle(cfg))
}

// afterCycle is what the HTTP side shows after a cycle: the view it
// publishes, and the reports computed again.
func (d *daemon) afterCycle(cfg *config.Config) *view {
	v := d.nextView(cfg)
	d.precomputeReports(cfg)
	return v
}

// standby scans without acting, so that a standby's readiness means its
// scan works.
func (d *daemon) standby(ctx context.Context, cfg *config.Config, start time.Time) {
	_, _, err := d.cycle.Scan(ctx, time.Now())
	if err != nil {
		d.failed(err, d.afterCycle(cfg), start)
		return
	}
	// The gauges are the ledger's; a read that fails leaves them as they
	// were and says so, without failing the scan the readiness is about.
	if st, err := d.cycle.Store.Peek(ctx); err != nil {
		d.log.Warn("standby: episode gauges not updated", zap.Error(fmt.Errorf("read the ledger: %w", err)))
	} else {
		d.cycle.ObserveStandby(st)
		d.cycle.ObserveHolds(ctx)
		d.m.LastSuccessfulCycle.SetToCurrentTime()
	}
	d.succeeded(d.afterCycle(cfg))
}

// ensureStore opens the ledger, retrying every cycle until it is reachable.
func (d *daemon) ensureStore(ctx context.Context) error {
	if st := d.store.Load(); st != nil {
		d.cycle.Store = st
		return nil
	}
	st, err := ledger.Open(ctx, d.storeURL)
	if err != nil {
		return app.FromError(err, d.src.StateFrom)
	}
	d.store.Store(st)
	d.cycle.Store = st
	d.armClicks()
	return nil
}

// failed records a failed cycle that began at start and publishes v (see
// publish), then logs, once per change of error rather than once per
// tick. Its scan failed unless one completed since start. The log line
// comes last so that whoever reads it finds the page and the API already
// saying the same (an operator, a script, or a test waiting for it).
func (d *daemon) failed(err error, v *view, start time.Time) {
	msg := term.OneLine(err)
	s := &d.status
	s.mu.Lock()
	s.lastErr = msg
	if s.failures == 0 {
		s.failingSince = time.Now()
	}
	s.failures++
	s.scanFailing = s.lastOK.Before(start)
	f := s.failing()
	d.publish(v)
	s.mu.Unlock()
	if msg != d.lastErr {
		d.log.Error("cycle failed", zap.String("err", msg), zap.Bool("scan_failing", f.scan), zap.Time("failing_since", f.since))
		d.lastErr = msg
	} else {
		d.log.Debug("cycle failed again", zap.String("err", msg))
	}
}

// scanned records a successful scan when it completes: the instant
// readiness and the status page count from, and its report.
func (d *daemon) scanned(rep scan.Report, at time.Time) {
	d.status.mu.Lock()
	d.status.report, d.status.lastOK = &rep, at
	d.status.mu.Unlock()
}

// succeeded records a cycle that completed, whose scan was recorded when
// it completed (scanned), and publishes v (see publish), then logs a
// recovery (after the publish, as failed does).
func (d *daemon) succeeded(v *view) {
	d.status.mu.Lock()
	d.status.lastErr, d.status.failures = "", 0
	d.status.failingSince, d.status.scanFailing = time.Time{}, false
	d.publish(v)
	d.status.mu.Unlock()
	if d.lastErr != "" {
		d.log.Info("cycle recovered", zap.String("after", d.lastErr))
		d.lastErr = ""
	}
}

// cronLogger adapts zap to cron's logger.
type cronLogger struct{ l *zap.Logger }

func (c cronLogger) Info(msg string, kv ...any) {
	if msg == "skip" {
		c.l.Warn("previous cycle still running; skipping this tick")
	}
}

func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error("cycle panicked; recovered", zap.String("msg", msg), zap.Error(err), zap.Any("detail", kv))
}

func (s *status) setLeader(v bool) {
	s.mu.Lock()
	s.leader = v
	s.mu.Unlock()
}
