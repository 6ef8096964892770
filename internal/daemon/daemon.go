package daemon

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/metrics"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
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
	mu       sync.Mutex
	cfg      atomic.Pointer[config.Config]
	cycle    *cycle.Cycle
	reader   *lazyReader
	store    atomic.Pointer[ledger.Store]
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
	view  atomic.Pointer[view]
	sched *cron.Cron
	entry cron.EntryID
	job   cron.Job

	// reloads carries reloads (SIGHUP's and POST /-/reload's) to the one
	// goroutine that runs them (reloader); stopping closes at SIGTERM.
	reloads  chan chan error
	stopping chan struct{}
}

// status is what the HTTP side reads.
type status struct {
	mu       sync.RWMutex
	report   *scan.Report
	lastOK   time.Time
	lastErr  string
	failures int // consecutive failed cycles
	sched    cron.Schedule
	leader   bool
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
	d := &daemon{opts: opts, log: log, level: level, reg: reg, m: metrics.New(reg, opts.Version), holder: app.Holder(),
		reloads: make(chan chan error), stopping: make(chan struct{})}
	d.m.ReloadSuccess.Set(1)
	d.m.ReloadTimestamp.SetToCurrentTime()
	if cfg.Slack == nil {
		log.Warn("no slack: block in the config; Slack steps are written to the log instead")
	}
	src, err := app.ReadSources(opts.Inputs, cfg)
	if err != nil {
		return err
	}
	app.WarnCleartext(log, cfg, src)
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
	// Where it reads and writes, passwords redacted: the first thing to
	// check when a daemon finds nothing is that it watches the right kandev.
	log.Info("watchdogd started", zap.String("version", opts.Version), zap.String("listen", cfg.HTTP.Listen),
		zap.String("go_memory_limit", applyMemoryLimit(opts.Getenv, os.ReadFile)),
		zap.String("schedule", cfg.Schedule), zap.Bool("ha", cfg.HA.Enabled), zap.String("holder", d.holder),
		zap.String("database", dburl.Redact(d.reader.url)), zap.String("ledger", dburl.Redact(d.storeURL)))
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
	c := &cycle.Cycle{Config: cfg, Log: d.log, Metrics: d.m, Now: time.Now, Holder: d.holder, OnScan: d.scanned}
	var err error
	if c.Outlets, err = app.Connect(cfg, src, d.log, c); err != nil {
		return err
	}
	var retired []io.Closer
	dbURL, sURL := src.Database, src.State
	ropts := cycle.ReaderOptions(cfg, time.Now)
	if d.reader == nil || d.reader.url != dbURL || d.reader.opts.BusyTimeout != ropts.BusyTimeout ||
		d.reader.tolerance != cfg.Thresholds.FutureTolerance {
		if d.reader != nil {
			retired = append(retired, d.reader)
		}
		d.reader = &lazyReader{url: dbURL, opts: ropts, tolerance: cfg.Thresholds.FutureTolerance}
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
	d.cfg.Store(cfg)
	d.src = src
	for _, r := range retired {
		_ = r.Close()
	}
	return nil
}

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
	cfg := d.cfg.Load()
	ctx, cancel := context.WithTimeout(d.work, cfg.CycleTimeout)
	defer cancel()
	d.refresh(cfg)
	if err := d.ensureStore(ctx); err != nil {
		// Scan anyway, so that the scan's metrics say whether kandev is
		// readable and the alert that fires names the ledger.
		_, _, _ = d.cycle.Scan(ctx, time.Now())
		d.failed(err, nil)
		return
	}
	if d.lease != nil {
		d.lease.Renew(ctx)
		if !d.lease.Held() {
			d.standby(ctx, cfg)
			return
		}
	}
	if _, err := d.cycle.Run(ctx); err != nil {
		d.failed(err, d.nextView(cfg))
		return
	}
	d.m.LastSuccessfulCycle.SetToCurrentTime()
	d.succeeded(d.nextView(cfg))
}

// standby scans without acting, so that a standby's readiness means its
// scan works.
func (d *daemon) standby(ctx context.Context, cfg *config.Config) {
	_, _, err := d.cycle.Scan(ctx, time.Now())
	if err != nil {
		d.failed(err, d.nextView(cfg))
		return
	}
	// The gauges are the ledger's; a read that fails leaves them as they
	// were and says so, without failing the scan the readiness is about.
	if st, err := d.cycle.Store.Peek(ctx); err != nil {
		d.log.Warn("standby: episode gauges not updated", zap.Error(fmt.Errorf("read the ledger: %w", err)))
	} else {
		d.cycle.ObserveStandby(st)
		d.m.LastSuccessfulCycle.SetToCurrentTime()
	}
	d.succeeded(d.nextView(cfg))
}

// ensureStore opens the ledger, retrying every cycle until it is reachable.
func (d *daemon) ensureStore(ctx context.Context) error {
	if st := d.store.Load(); st != nil {
		d.cycle.Store = st
		return nil
	}
	st, err := ledger.Open(ctx, d.storeURL)
	if err != nil {
		return err
	}
	d.store.Store(st)
	d.cycle.Store = st
	return nil
}

// failed records a failed cycle and publishes v (see publish), then logs,
// once per change of error rather than once per tick. The log line comes
// last so that whoever reads it finds the page and the API already saying
// the same (an operator, a script, or a test waiting for it).
func (d *daemon) failed(err error, v *view) {
	msg := term.OneLine(err)
	d.status.mu.Lock()
	d.status.lastErr = msg
	d.status.failures++
	d.publish(v)
	d.status.mu.Unlock()
	if msg != d.lastErr {
		d.log.Error("cycle failed", zap.String("err", msg))
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
	d.publish(v)
	d.status.mu.Unlock()
	if d.lastErr != "" {
		d.log.Info("cycle recovered", zap.String("after", d.lastErr))
		d.lastErr = ""
	}
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
	if d.reader != nil {
		_ = d.reader.Close()
	}
	if st := d.store.Load(); st != nil {
		_ = st.Close()
	}
	d.log.Info("stopped")
	return nil
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
