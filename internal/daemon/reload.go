package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/app"
	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/httpguard"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/term"
)

// errShuttingDown answers a reload asked for after SIGTERM.
var errShuttingDown = errors.New("shutting down")

// reloader runs reloads one at a time, off the loop that takes SIGTERM: a
// reload waits for an in-flight cycle, and SIGTERM must not wait behind it.
func (d *daemon) reloader() {
	for {
		select {
		case reply := <-d.reloads:
			reply <- d.safeReload()
		case <-d.stopping:
			return
		}
	}
}

// safeReload is reload with a panic turned into a failed reload: the file
// is operator input, and whatever a library reading it does, the daemon
// keeps running. A panic before the new config was installed (install is
// all or nothing) leaves the previous one in effect; one after it leaves
// the new one in effect without the rest of the reload (its schedule and
// log level), and the log line says which.
func (d *daemon) safeReload() (err error) {
	before := d.cfg.Load()
	defer func() {
		if r := recover(); r != nil {
			d.m.ReloadSuccess.Set(0)
			err = fmt.Errorf("config reload: %v", r)
			d.log.Error(panickedReload(d.cfg.Load() != before), zap.String("err", term.OneLine(err)))
		}
	}()
	return d.reload()
}

// panickedReload is the log line of a reload that panicked, saying which
// configuration it left in effect.
func panickedReload(installed bool) string {
	if installed {
		return "config reload failed after installing the new configuration: it is in effect, " +
			"but its schedule and log level may not be; reload again or restart"
	}
	return "config reload failed; the previous configuration stays in effect"
}

// requestReload hands a reload to the reloader and returns its outcome, or
// errShuttingDown once SIGTERM came, or ctx's error.
func (d *daemon) requestReload(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case d.reloads <- reply:
	case <-d.stopping:
		return errShuttingDown
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-d.stopping:
		return errShuttingDown
	}
}

// reload reads the config file again. An invalid file keeps the running
// config, with config_last_reload_successful 0 and one clear log line; the
// error is also the answer to POST /-/reload.
func (d *daemon) reload() error {
	cfg, err := app.LoadConfig(d.opts.Inputs)
	if err == nil {
		for _, key := range keepRestartOnly(d.cfg.Load(), cfg) {
			d.log.Warn("config key changed; it takes effect at the next restart", zap.String("key", key))
		}
		var src app.Sources
		if src, err = app.ReadSources(d.opts.Inputs, cfg); err == nil {
			err = d.apply(cfg, src)
		}
	}
	if errors.Is(err, errShuttingDown) {
		return err
	}
	if err != nil {
		d.m.ReloadSuccess.Set(0)
		d.log.Error("config reload failed; the previous configuration stays in effect", zap.String("err", term.OneLine(err)))
		return err
	}
	if err := d.level.UnmarshalText([]byte(cfg.Log.Level)); err != nil {
		d.log.Warn("log.level", zap.Error(err))
	}
	d.m.ReloadSuccess.Set(1)
	d.m.ReloadTimestamp.SetToCurrentTime()
	d.log.Info("config reloaded", zap.String("file", cfg.File))
	warnConfig(d.log, cfg)
	return nil
}

// apply installs a config read again, after any in-flight cycle: all of
// it, or (when its schedule or its sources cannot be used) none of it.
func (d *daemon) apply(cfg *config.Config, src app.Sources) error {
	sched, err := parseSchedule(cfg.Schedule)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	select {
	case <-d.stopping: // shutdown closes what install would open
		return errShuttingDown
	default:
	}
	if src.State != d.storeURL { // a ledger that cannot be made is refused, as at start
		if err := ledger.CheckPath(src.State); err != nil {
			return app.FromError(err, src.StateFrom)
		}
	}
	if err := d.install(cfg, src); err != nil {
		return err
	}
	d.schedule(sched)
	return nil
}

// keepRestartOnly carries the keys a running daemon cannot change over
// from old into cfg, and names those that differed: the listener is bound
// at start, and the lease keeper (whether there is one, and its timer) runs
// from start — enabling HA on reload would leave no lease to hold, so the
// daemon would stop acting.
func keepRestartOnly(old, cfg *config.Config) []string {
	var changed []string
	if old.HTTP.Listen != cfg.HTTP.Listen {
		changed, cfg.HTTP.Listen = append(changed, "http.listen"), old.HTTP.Listen
	}
	if old.HTTP.WebConfigFile != cfg.HTTP.WebConfigFile {
		changed, cfg.HTTP.WebConfigFile = append(changed, "http.web_config_file"), old.HTTP.WebConfigFile
	}
	if old.HA.Enabled != cfg.HA.Enabled {
		changed, cfg.HA.Enabled = append(changed, "ha.enabled"), old.HA.Enabled
	}
	if old.HA.LeaseTTL != cfg.HA.LeaseTTL {
		changed, cfg.HA.LeaseTTL = append(changed, "ha.lease_ttl"), old.HA.LeaseTTL
	}
	return changed
}

// reloadHTTP is Alertmanager's POST /-/reload: the same reload as SIGHUP,
// for a config reloader in another container, which cannot signal this
// process. Other methods get 405 from the mux, a browser's request from
// another site's page 403 (see httpguard.CrossSite). The answer says whether the
// new file took effect, and why not (file, line, field; never a secret).
func (d *daemon) reloadHTTP(w http.ResponseWriter, r *http.Request) {
	if why := httpguard.CrossSite(r); why != "" {
		http.Error(w, "reload refused: a request from another site's page: "+why, http.StatusForbidden)
		return
	}
	switch err := d.requestReload(r.Context()); {
	case err == nil:
		_, _ = w.Write([]byte("config reloaded\n"))
	case errors.Is(err, errShuttingDown):
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
	case r.Context().Err() != nil: // the client went away
	default:
		http.Error(w, "failed to reload config: "+term.OneLine(err), http.StatusInternalServerError)
	}
}

// warnConfig logs what check-config warns of a config in effect: it is
// valid, but will not do what it reads like.
func warnConfig(log *zap.Logger, cfg *config.Config) {
	for _, w := range cfg.Warnings() {
		log.Warn("config warning", zap.String("warning", w))
	}
}
