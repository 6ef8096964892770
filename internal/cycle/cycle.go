// Package cycle is one pass of watchdogd: read kandev's snapshot, derive
// the findings, decide on the ledger what is due, freeze each action's
// text, and deliver it through internal/notify's protocol. It is the same
// code whether run once, as a dry run (DryRun) or by the daemon. See
// docs/architecture.md, "A cycle".
package cycle

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/metrics"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// Reader is what a cycle reads of kandev.
type Reader interface {
	Snapshot(ctx context.Context) (*model.Snapshot, error)
	TaskSnapshot(ctx context.Context, taskID string) (*model.Snapshot, error)
	Traces(ctx context.Context, sessionIDs, turnIDs []string) (*model.Traces, error)
}

// Cycle is one pass of watchdogd: snapshot → findings → decide → freeze →
// deliver. `run --once` runs it once; the daemon runs the same function on
// every tick.
type Cycle struct {
	Config *config.Config
	Reader Reader
	Store  *ledger.Store
	// Outlets deliver each kind of action (see internal/notify).
	Outlets notify.Registry
	Log     *zap.Logger
	Metrics *metrics.Metrics
	Now     func() time.Time
	// Holder names this process in claims.
	Holder string
	// MayAct, when set, is asked before each delivery: a replica that lost
	// the leader lease stops acting mid-cycle.
	MayAct func() bool
	// OnScan, when set, hears of each successful scan as it completes,
	// before the cycle decides and delivers: readiness counts from the
	// scan, so deliveries that take long (a slow Slack) do not make a
	// replica that reads kandev fine look stale.
	OnScan func(rep scan.Report, at time.Time)
	// OnPlan, when set, hears of each cycle's plan once it is saved,
	// before its deliveries, which may take long (a busy channel).
	OnPlan func()

	// badRows holds the kandev rows at fault already logged; the daemon
	// hands it from cycle to cycle across reloads (Continue).
	badRows badRowsSeen

	lastPrune time.Time
}

// Continue carries over from the cycle that ran before this one (a reload
// built this one) what it remembers across cycles: the bad rows it logged.
func (c *Cycle) Continue(prev *Cycle) {
	if prev != nil {
		c.badRows = prev.badRows
	}
}

// Result is what one cycle did.
type Result struct {
	Report  scan.Report
	Plan    model.Plan
	Applied model.Applied
	Counts  map[model.Result]int
}

// Run runs one cycle.
func (c *Cycle) Run(ctx context.Context) (Result, error) {
	start, now := time.Now(), c.Now()
	rep, snap, err := c.Scan(ctx, now)
	if err != nil {
		return Result{}, err
	}
	res := Result{Report: rep, Counts: map[model.Result]int{}}
	held := c.endCleared(ctx, rep)
	silences, err := c.silences(ctx, now)
	if err != nil {
		return res, err
	}
	in := c.policyInput(policy.Unresolved(rep.Findings, held), now)
	want := func(st model.Ledger) []string { return policy.Wanted(st, in) }
	res.Plan, res.Applied, err = c.Store.DecideFor(ctx, want, func(st model.Ledger) (model.Plan, error) {
		c.observeUntold(st)
		in.Reason = c.reasons(ctx, snap, rep, st)
		p := policy.Decide(st, in)
		c.Freeze(&p, st, rep, now)
		return p, nil
	})
	if err != nil {
		return res, err
	}
	c.logPlan(res.Plan, res.Applied)
	c.Metrics.Lives.Opening(res.Plan.Open)
	if c.OnPlan != nil {
		c.OnPlan()
	}
	c.deliverer().Deliver(ctx, silences, res.Counts)
	c.keepHolds(ctx)
	c.prune(ctx, now)
	c.logSummary(res, time.Since(start))
	c.observeEpisodes(ctx)
	return res, nil
}

// logSummary writes one line per cycle: at info when it changed something
// (an episode opened or resolved, an action ended or will be retried), so
// `kubectl logs` shows what each cycle did; at debug when it only found the
// same episodes again or deferred actions (a silence would otherwise log
// every minute).
func (c *Cycle) logSummary(res Result, took time.Duration) {
	level := zap.DebugLevel
	fields := []zap.Field{zap.Int("sessions", len(res.Report.Sessions)), zap.Int("findings", len(res.Report.Findings)),
		zap.Int("opened", len(res.Plan.Open)), zap.Int("resolved", len(res.Plan.Resolve))}
	if len(res.Plan.Open)+len(res.Plan.Resolve) > 0 {
		level = zap.InfoLevel
	}
	for _, r := range []model.Result{model.ResultDelivered, model.ResultFailed, model.ResultRetried, model.ResultSuperseded, model.ResultDeferred} {
		n := res.Counts[r]
		if n > 0 && r != model.ResultDeferred {
			level = zap.InfoLevel
		}
		fields = append(fields, zap.Int(string(r), n))
	}
	c.Log.Log(level, "cycle finished", append(fields, zap.Duration("took", took))...)
}

// Scan takes the snapshot within database.scan_timeout and derives findings.
func (c *Cycle) Scan(ctx context.Context, now time.Time) (scan.Report, *model.Snapshot, error) {
	start := time.Now()
	sctx, cancel := context.WithTimeout(ctx, c.Config.Database.ScanTimeout)
	defer cancel()
	snap, err := c.Reader.Snapshot(sctx)
	if err != nil {
		c.Metrics.Scans.WithLabelValues("error").Inc()
		return scan.Report{}, nil, err
	}
	rep := Findings(snap, c.Config, now)
	c.Metrics.Scans.WithLabelValues("success").Inc()
	c.Metrics.ScanDuration.Observe(time.Since(start).Seconds())
	c.Metrics.LastSuccessfulScan.Set(float64(time.Now().Unix()))
	c.Metrics.ObserveReport(rep, snap)
	c.Metrics.Workspaces.Observe(rep.Findings, metrics.PerWorkspace{On: c.Config.Metrics.ByWorkspace, Max: c.Config.Metrics.MaxWorkspaces}, now)
	c.logBadRows(snap)
	if c.OnScan != nil {
		c.OnScan(rep, time.Now())
	}
	return rep, snap, nil
}

// policyInput is the decision's input; its Reason is set from the ledger
// state the decision reads (reasons).
func (c *Cycle) policyInput(findings []scan.Finding, now time.Time) policy.Input {
	return policy.Input{Now: now, Findings: findings, Policies: c.Config.Policy, Routing: c.Config.Routing(), NewID: uuid.NewString,
		Resolves: c.Resolves(), Members: c.members()}
}

// members is how many Alertmanagers the config lists (0 without an
// alertmanager: block).
func (c *Cycle) members() int {
	if c.Config.Alertmanager == nil {
		return 0
	}
	return len(c.Config.Alertmanager.URLs)
}

// Resolves names the action that tells each outlet an episode cleared,
// as the outlets were registered (policy.Input.Resolves).
func (c *Cycle) Resolves() map[model.ActionKind]model.ActionKind {
	resolves := map[model.ActionKind]model.ActionKind{}
	for kind, e := range c.Outlets {
		if e.Resolve != "" {
			resolves[kind] = e.Resolve
		}
	}
	return resolves
}

// reasons says how episodes that scans no longer report cleared, from the
// snapshot and, read once for all such episodes, what kandev holds of what
// the snapshot does not show (Reader.Traces): why a session left (ended,
// or its task archived), and the rows of an episode's turn that is no
// longer its session's current one (kandev keeps a question's rows on the
// turn it was asked in; a stalled turn's row says whether it completed or
// a restart abandoned it). A failed read leaves those saying only that the
// session ended or the turn moved on.
func (c *Cycle) reasons(ctx context.Context, snap *model.Snapshot, rep scan.Report, st model.Ledger) func(model.Episode) model.Reason {
	sessions := make(map[string]*model.Session, len(snap.Sessions))
	for i := range snap.Sessions {
		sessions[snap.Sessions[i].ID] = &snap.Sessions[i]
	}
	reported := make(map[string]bool, len(rep.Findings))
	for _, f := range rep.Findings {
		reported[policy.Identity(f)] = true
	}
	var left, moved []string
	for _, e := range st.Open {
		if reported[e.Identity] {
			continue
		}
		s := sessions[e.SessionID]
		switch {
		case s == nil:
			left = append(left, e.SessionID)
		case e.TurnID != "" && ownTurn(e.Kind) && !holds(s, e.TurnID):
			moved = append(moved, e.TurnID)
		}
	}
	traces := &model.Traces{}
	if len(left)+len(moved) > 0 {
		rctx, cancel := context.WithTimeout(ctx, c.Config.Database.ScanTimeout)
		defer cancel()
		t, err := c.Reader.Traces(rctx, left, moved)
		if err != nil {
			c.Log.Warn("could not read the sessions and turns episodes cleared on; saying only that the session ended or the turn moved on", zap.Error(err))
		} else {
			traces = t
		}
	}
	return func(e model.Episode) model.Reason {
		cl := scan.Clearing{Kind: e.Kind, TurnID: e.TurnID, PendingID: e.PendingID, Detail: policy.StoredFinding(e).Detail, Session: sessions[e.SessionID],
			StallAfter: c.Config.Thresholds.StallAfter}
		if g, ok := traces.Sessions[e.SessionID]; ok {
			cl.Gone = &g
		}
		if t, ok := traces.Turns[e.TurnID]; ok {
			cl.Turn = &t
		}
		return model.Because(scan.Cleared(cl))
	}
}

// ownTurn says whether an episode of this kind clears by what its own
// turn's rows say: a question's, a permission's, a turn's progress.
func ownTurn(kind model.Kind) bool {
	return scan.AskedOn(kind) || kind == model.KindStalledTurn || kind == model.KindNeverStarted
}

// holds says whether the snapshot holds turn id of session s, with its
// messages: its current turn, or the turn before a boot turn.
func holds(s *model.Session, id string) bool {
	return s.Current != nil && s.Current.ID == id || s.BeforeBoot != nil && s.BeforeBoot.ID == id
}

// silences are the config's and the ledger's active silences.
func (c *Cycle) silences(ctx context.Context, now time.Time) ([]policy.Silence, error) {
	return ActiveSilences(ctx, c.Config, c.Store, now)
}

// ActiveSilences merges the config's silences with the ledger's runtime
// ones (`watchdogd silence add`): both defer alike.
func ActiveSilences(ctx context.Context, cfg *config.Config, st *ledger.Store, now time.Time) ([]policy.Silence, error) {
	var out []policy.Silence
	for i, s := range cfg.Silences {
		out = append(out, policy.Silence{ID: fmt.Sprintf("config-%d", i), Matchers: s.All(), Until: s.Until.Time, Comment: s.Comment})
	}
	runtime, err := st.Silences(ctx, now, false)
	if err != nil {
		return nil, err
	}
	for _, s := range runtime {
		out = append(out, policy.Silence{ID: s.ID, Matchers: s.Matchers, Identity: s.Identity, Until: s.Until, Comment: s.Comment})
	}
	return out, nil
}

func (c *Cycle) logPlan(p model.Plan, a model.Applied) {
	for _, e := range p.Open {
		c.Log.Info("episode opened", zap.String("episode", e.ID), zap.String("kind", string(e.Kind)), zap.String("session_id", e.SessionID),
			zap.String("turn_id", e.TurnID), zap.String("key", e.Identity))
	}
	for _, r := range p.Resolve {
		c.Log.Info("episode resolved", zap.String("episode", r.ID), zap.String("reason", r.Reason.Words()), zap.String("cleared", string(r.Reason.Code)))
	}
	for _, cf := range a.Conflicts {
		c.Metrics.Action(actionOf(p, cf.Key), model.ResultConflict)
		c.Log.Warn("decision conflicts with the stored action; the stored one stays authoritative (was the config changed?)",
			zap.String("key", cf.Key), zap.String("stored_digest", cf.Stored), zap.String("new_digest", cf.Want))
	}
}

func actionOf(p model.Plan, key string) model.ActionKind {
	for _, a := range p.Actions {
		if a.Key == key {
			return a.Kind
		}
	}
	return model.ActionSlack
}

// prune deletes episodes resolved longer ago than state.retention, at most
// hourly.
func (c *Cycle) prune(ctx context.Context, now time.Time) {
	if now.Sub(c.lastPrune) < time.Hour {
		return
	}
	c.lastPrune = now
	n, err := c.Store.Prune(ctx, now.Add(-c.Config.State.Retention))
	if err != nil {
		c.Log.Warn("prune ledger", zap.Error(err))
		return
	}
	if n > 0 {
		c.Log.Info("pruned resolved episodes", zap.Int64("episodes", n))
	}
}

// observeUntold sets the untold gauge from a state of the ledger, as the
// last cycle left it.
func (c *Cycle) observeUntold(st model.Ledger) {
	metrics.EpisodesByKind(c.Metrics.EpisodesUntold, policy.Untold(st))
}

// observeOpen sets the open-episodes gauge from counts by kind.
func (c *Cycle) observeOpen(counts map[model.Kind]int) {
	metrics.EpisodesByKind(c.Metrics.EpisodesOpen, counts)
}

// ObserveStandby sets the ledger's gauges on a replica that does not
// decide, from a read of the ledger, so that no value it set while it led
// lingers in a max over the replicas.
func (c *Cycle) ObserveStandby(st model.Ledger) {
	open := map[model.Kind]int{}
	for _, e := range st.Open {
		open[e.Kind]++
	}
	c.observeOpen(open)
	c.observeUntold(st)
}

// observeEpisodes sets the open-episode gauges from the ledger. A read that
// fails leaves them as they were and says so, as a standby's does: the
// cycle has acted by then, and failing it would report a scan and a
// delivery that worked as broken.
func (c *Cycle) observeEpisodes(ctx context.Context) {
	counts, err := c.Store.OpenCounts(ctx)
	if err != nil {
		c.Log.Warn("episode gauges not updated", zap.Error(fmt.Errorf("read the ledger: %w", err)))
		return
	}
	c.observeOpen(counts)
}
