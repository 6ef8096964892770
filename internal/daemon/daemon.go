// Package daemon is `watchdogd run`: it runs a cycle on the configured
// schedule, holds the leader lease when replicas share a ledger, reloads
// its config and secrets without a restart, bounds its own memory, and
// serves /metrics, the probes, the status page and its JSON API. The
// cycle itself is internal/cycle; `run --once` runs the same cycle once
// (Once).
package daemon

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/robfig/cron/v3"
	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/app"
	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/cycle"
	"github.com/watchdogd/watchdogd/internal/dburl"
	"github.com/watchdogd/watchdogd/internal/interact"
	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/memlimit"
	"github.com/watchdogd/watchdogd/internal/metrics"
	"github.com/watchdogd/watchdogd/internal/notify/alertmanager"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// shutdownGrace bounds how long SIGTERM waits for an in-flight cycle before
// cancelling it (its unfinished actions stay pending or claimed and are
// settled by the next run).
const shutdownGrace = 5 * time.Second

// Options are what the daemon takes from its command line and process.
type Options struct {
	app.Inputs
	Stdout, Stderr io.Writer
	Version        string
}

// daemon is `watchdogd run`: the schedule, HTTP, the lease and reloads
// around the same Cycle that --once runs.
type daemon struct {
	opts   Options
	log    *zap.Logger
	level  zap.AtomicLevel
	reg    *prometheus.Registry
	m      *metrics.Metrics
	holder string

	// mu serialises cycles and reloads.
	mu     sync.Mutex
	cfg    atomic.Pointer[config.Config]
	cycle  *cycle.Cycle
	reader *kandev.Lazy
	store  atomic.Pointer[ledger.Store]
	// alerts is the Alertmanager outlet the resends go through (nil
	// without an alertmanager: block).
	alerts   atomic.Pointer[alertmanager.Outlet]
	storeURL string
	lease    *leaseKeeper
	work     context.Context
	lastErr  string
	// src are the sources the cycle runs on, srcErr the last error
	// reading them again (logged once).
	src    app.Sources
	srcErr string

	status status
	// view is what the status page and the API show (nil until a
	// cycle has published one).
	view atomic.Pointer[view]
	// reports are GET /api/v1/report's precomputed windows (nil: none);
	// reportSlot lets one other window be computed at a time; reportErr
	// is the last error computing them (logged once).
	reports    atomic.Pointer[reportCache]
	reportSlot chan struct{}
	reportErr  string
	// countErr is the last error counting resolves (logged once).
	countErr string

	sched *cron.Cron
	entry cron.EntryID
	job   cron.Job

	// reloads carries reloads (SIGHUP's and POST /-/reload's) to the one
	// goroutine that runs them (reloader); stopping closes at SIGTERM.
	reloads  chan chan error
	stopping chan struct{}

	// clicks is what a click in Slack is handled with (slack.interactivity),
	// nil until the ledger is open; clickWork waits for clicks being
	// delivered at shutdown, clickSrv stops receiving them (HTTP or Socket Mode).
	clicks    atomic.Pointer[clickRig]
	clickWork *interact.Handler
	clickSrv  shutdowner
}

// status is what the HTTP side reads.
type status struct {
	mu       sync.RWMutex
	report   *scan.Report
	lastOK   time.Time
	lastErr  string
	failures int // consecutive failed cycles
	// failingSince is when the first of those failures came, scanFailing
	// whether the last one's scan failed (kandev unread), not only what
	// came after it: the page, the API and /readyz say both.
	failingSince time.Time
	scanFailing  bool
	sched        cron.Schedule
	leader       bool
}

// Run is `watchdogd run`: it runs until ctx is cancelled (SIGTERM), then
// shuts down within a bound.
func Run(ctx context.Context, opts Options) error {
	cfg, err := app.LoadConfig(opts.Inputs)
	if err != nil {
		return err
	}
	log, level, err := app.NewLeveledLogger(cfg.Log, opts.Stderr)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	d := &daemon{opts: opts, log: log, level: level, reg: reg, m: metrics.New(reg, opts.Version), holder: app.Holder(), reportSlot: make(chan struct{}, 1),
		reloads: make(chan chan error), stopping: make(chan struct{})}
	d.m.ReloadSuccess.Set(1)
	d.m.ReloadTimestamp.SetToCurrentTime()
	if cfg.Slack == nil {
		log.Warn("no slack: block in the config; Slack steps are written to the log instead")
	}
	warnConfig(log, cfg)
	src, err := app.ReadSources(opts.Inputs, cfg)
	if err != nil {
		return err
	}
	app.WarnCleartext(log, cfg, src)
	if err := ledger.CheckPath(src.State); err != nil {
		return app.FromError(err, src.StateFrom)
	}
	if err := d.install(cfg, src); err != nil {
		return err
	}
	srv, err := d.serveHTTP(cfg)
	if err != nil {
		return err
	}
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	if err := d.start(work, cfg); err != nil {
		return err
	}
	if d.clickSrv, err = d.receiveClicks(work, cfg); err != nil {
		return err
	}
	// Where it reads and writes, passwords redacted: the first thing to
	// check when a daemon finds nothing is that it watches the right kandev.
	log.Info("watchdogd started", zap.String("version", opts.Version), zap.String("listen", cfg.HTTP.Listen),
		zap.String("go_memory_limit", memlimit.Apply(opts.Getenv, os.ReadFile)),
		zap.String("schedule", cfg.Schedule), zap.Bool("ha", cfg.HA.Enabled), zap.String("holder", d.holder),
		zap.String("database", dburl.Redact(d.reader.URL)), zap.String("ledger", dburl.Redact(d.storeURL)))
	return d.serve(ctx, srv, cancelWork)
}

// start begins the work that outlives a cycle: the lease (or leadership
// outright without HA), the schedule, and the first cycle, which runs at
// once rather than waiting for the schedule's first tick. work is cancelled
// only by shutdown, after its grace period, not by SIGTERM itself.
func (d *daemon) start(work context.Context, cfg *config.Config) error {
	d.work = work
	if cfg.HA.Enabled {
		go d.lease.Run(work)
	} else {
		d.m.Leader.Set(1)
		d.status.setLeader(true)
	}
	d.job = cron.NewChain(cron.SkipIfStillRunning(cronLogger{d.log}), cron.Recover(cronLogger{d.log})).Then(cron.FuncJob(d.tick))
	d.sched = cron.New(cron.WithLogger(cronLogger{d.log}))
	sched, err := parseSchedule(cfg.Schedule)
	if err != nil {
		return err
	}
	d.schedule(sched)
	d.sched.Start()
	go d.job.Run()
	go d.resendAlerts(work)
	return nil
}

// shutdowner is the HTTP server as shutdown sees it.
type shutdowner interface{ Shutdown(context.Context) error }

// serve turns SIGHUP into reloads until ctx ends, then shuts down.
func (d *daemon) serve(ctx context.Context, srv shutdowner, cancelWork context.CancelFunc) error {
	go d.reloader()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-hup:
			go func() { _ = d.requestReload(context.Background()) }() // the outcome is logged
		case <-ctx.Done():
			close(d.stopping)
			return d.shutdown(srv, cancelWork)
		}
	}
}

// install builds the cycle for a config and its sources (at start, on
// reload, and when a source file changed) and puts it in place whole: what
// can fail (building the clients) comes before anything changes, and the
// reader and ledger it replaces are closed only once the new cycle is in
// place, so that an error leaves the previous cycle untouched and a panic
// closing them leaves the new one complete.
func (d *daemon) install(cfg *config.Config, src app.Sources) error {
	c := &cycle.Cycle{Config: cfg, Log: d.log, Metrics: d.m, Now: time.Now, Holder: d.holder, OnScan: d.scanned, OnPlan: d.planned}
	var err error
	if c.Outlets, err = app.Connect(cfg, src, d.log, c); err != nil {
		return err
	}
	var retired []io.Closer
	dbURL, sURL := src.Database, src.State
	ropts := cycle.ReaderOptions(cfg, time.Now)
	if d.reader == nil || d.reader.URL != dbURL || d.reader.From != src.DatabaseFrom || d.reader.Opts.BusyTimeout != ropts.BusyTimeout ||
		d.reader.Tolerance != cfg.Thresholds.FutureTolerance {
		if d.reader != nil {
			retired = append(retired, d.reader)
		}
		d.reader = &kandev.Lazy{URL: dbURL, From: src.DatabaseFrom, Opts: ropts, Tolerance: cfg.Thresholds.FutureTolerance}
	}
	c.Reader = d.reader
	if sURL != d.storeURL {
		if old := d.store.Swap(nil); old != nil {
			retired = append(retired, old)
		}
		d.storeURL = sURL
	}
	if cfg.HA.Enabled {
		if d.lease == nil {
			d.lease = &leaseKeeper{store: d.store.Load, holder: d.holder, ttl: cfg.HA.LeaseTTL, log: d.log, onLeads: d.onLeads,
				mayLead: d.mayLead}
		}
		c.MayAct = d.lease.Held
	}
	if d.cycle != nil {
		c.Continue(d.cycle)
	}
	d.cycle = c
	d.m.ObserveLanes(c.NamedLanes(), nil) // every lane's series from the start; the first cycle reads their breakers
	d.alerts.Store(alertsOf(c.Outlets))
	d.cfg.Store(cfg)
	d.src = src
	d.armClicks()
	for _, r := range retired {
		_ = r.Close()
	}
	return nil
}

// shutdown stops scheduling, lets an in-flight cycle finish within
// shutdownGrace, releases the lease and closes everything.
func (d *daemon) shutdown(srv shutdowner, cancelWork context.CancelFunc) error {
	d.log.Info("shutting down")
	stopped := d.sched.Stop()
	// Cron's context covers only the cycles cron started; the first cycle
	// runs outside it. Every cycle holds mu, so mu is what to wait for.
	idle := make(chan struct{})
	go func() {
		<-stopped.Done()
		d.mu.Lock()
		close(idle)
	}()
	select {
	case <-idle:
	case <-time.After(shutdownGrace):
		d.log.Warn("cycle still running after the grace period; cancelling it")
		cancelWork()
		<-idle
	}
	defer d.mu.Unlock()
	cancelWork()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if d.lease != nil {
		d.lease.Release(ctx)
	}
	if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		d.log.Warn("stop HTTP", zap.Error(err))
	}
	if d.clickSrv != nil {
		if err := d.clickSrv.Shutdown(ctx); err != nil {
			d.log.Warn("stop receiving Slack clicks", zap.Error(err))
		}
	}
	if d.clickWork != nil {
		d.clickWork.Wait()
	}
	if d.reader != nil {
		_ = d.reader.Close()
	}
	if st := d.store.Load(); st != nil {
		_ = st.Close()
	}
	d.log.Info("stopped")
	return nil
}
