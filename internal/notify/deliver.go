package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/metrics"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
)

// Store is what the protocol needs of the ledger.
type Store interface {
	DueActions(ctx context.Context, now time.Time, claimTTL time.Duration) ([]model.Due, error)
	DueAction(ctx context.Context, key string, now time.Time, claimTTL time.Duration) (model.Due, bool, error)
	Claim(ctx context.Context, key, holder, token string, now time.Time, claimTTL time.Duration) (model.Claim, bool, error)
	Action(ctx context.Context, key string) (model.Action, error)
	Settle(ctx context.Context, key, token string, o model.Outcome, now time.Time) error
	GateUntil(ctx context.Context, channel string) (time.Time, error)
	CloseGate(ctx context.Context, channel string, until time.Time) error
	HoldOf(ctx context.Context, outlet, destination string, now time.Time) (model.Hold, bool, error)
	Hold(ctx context.Context, h model.Hold) error
	Unhold(ctx context.Context, outlet, destination string) error
	Probe(ctx context.Context, outlet, destination string, now, until time.Time) (bool, error)
	// Unsettled counts an episode's steps of kind to channel still owed
	// (pending or in flight).
	Unsettled(ctx context.Context, episodeID string, kind model.ActionKind, channel string) (int, error)
}

// Deliverer runs the protocol over every due action.
type Deliverer struct {
	Store   Store
	Outlets Registry
	// Fence re-reads kandev for an episode right before an attempt: its
	// finding as it holds now, nil when it no longer does.
	Fence   func(ctx context.Context, e model.Episode) (*scan.Finding, error)
	Log     *zap.Logger
	Metrics *metrics.Metrics
	Now     func() time.Time
	// Holder names this process in claims.
	Holder string
	// ClaimTTL is when another process may take a claim over.
	ClaimTTL time.Duration
	Quiet    *model.QuietHours
	// MayAct, when set, is asked before each delivery: a replica that lost
	// the leader lease stops acting mid-cycle. Lanes ask it concurrently.
	MayAct func() bool
	// LaneWorkers bounds how many lanes of one outlet deliver at once (0:
	// LaneWorkers).
	LaneWorkers int
}

// DeliverOne runs the protocol for the action with key, now, when it is
// due: a click in Slack goes out the moment it is saved rather than at the
// next cycle, and its story right after it. It claims the action as a
// cycle would, so a cycle delivering it at the same moment, in this
// process or another replica's, sends nothing twice. A person is waiting:
// while the action's lane is held by its breaker it is tried once anyway,
// and fails rather than waits when that attempt does not go through, so
// that the story tells them. It reports what became of the action (zero
// when it was not due: settled, or held by another process).
func (d *Deliverer) DeliverOne(ctx context.Context, key string, silences []policy.Silence) (model.Result, error) {
	due, ok, err := d.Store.DueAction(ctx, key, d.Now(), d.ClaimTTL)
	if err != nil || !ok {
		return "", err
	}
	if d.MayAct != nil && !d.MayAct() {
		return "", nil // the leader delivers it at its next cycle
	}
	r := &run{silences: silences, counts: map[model.Result]int{}}
	lr := d.openLane(ctx, LaneOf(d.Outlets, due.Action), due.Action)
	lr.once = GateOf(lr.hold, d.Now()) != Open
	d.one(ctx, r, lr, due)
	for res := range r.counts {
		return res, nil
	}
	return "", nil
}

// held says whether a paced action waits this cycle, without claiming it.
// A silence or quiet hours hold it before the channel's gate is read.
func (d *Deliverer) held(ctx context.Context, r *run, lr *laneRun, due model.Due) (bool, string) {
	e, ok := d.Outlets[due.Kind]
	if !ok || !e.Paced {
		return false, ""
	}
	if deferred, why := policy.Deferred(due.Episode, r.silences, d.Quiet, d.Now()); deferred {
		return true, why
	}
	if !lr.gateRead {
		lr.gate, lr.gateErr = d.Store.GateUntil(ctx, e.Gate+due.Channel)
		lr.gateRead = lr.gateErr == nil
	}
	held, why, overBudget := Held(Holding{Episode: due.Episode, Silences: r.silences, Quiet: d.Quiet, Gate: lr.gate, GateErr: lr.gateErr,
		Sent: lr.sent, Budget: budget(e), Now: d.Now()})
	if overBudget && e.RateLimited != nil {
		e.RateLimited(metrics.LimitedByBudget)
	}
	return held, why
}

// budget is how many actions an entry's channel takes this cycle (0: no
// bound).
func budget(e Entry) int {
	if e.Budget == nil {
		return 0
	}
	return e.Budget()
}

func (d *Deliverer) one(ctx context.Context, r *run, lr *laneRun, due model.Due) {
	log := d.Log.With(zap.String("key", due.Key), zap.String("action", string(due.Kind)), zap.String("kind", string(due.Episode.Kind)),
		zap.String("session_id", due.Episode.SessionID), zap.String("turn_id", due.Episode.TurnID))
	if held, why := d.held(ctx, r, lr, due); held {
		r.count(d, due.Action, model.ResultDeferred)
		log.Debug("action deferred", zap.String("why", why))
		return
	}
	token := uuid.NewString()
	claimed := time.Now()
	claim, ok, err := d.Store.Claim(ctx, due.Key, d.Holder, token, d.Now(), d.ClaimTTL)
	if err != nil {
		log.Error("claim action; nothing sent", zap.Error(err))
		return
	}
	if !ok {
		return // another process has it
	}
	start := time.Now()
	end := d.withinClaim(ctx, claimed, lr, claim, due.Episode, log)
	out := end.out
	if out.State == model.StateDelivered {
		d.Metrics.Delivered(due.Kind, time.Since(start))
	}
	if lr.once && out.State == model.StatePending && !out.Refund {
		out = model.Outcome{State: model.StateFailed, Error: heldWords(lr.hold, out.Error)}
	}
	d.trip(ctx, lr, end.reach, end.why, log)
	if err := d.Store.Settle(context.WithoutCancel(ctx), due.Key, token, out, d.Now()); err != nil {
		// The outcome is lost, not the action: the claim goes stale and the
		// next holder settles it from evidence.
		log.Error("record action outcome", zap.String("outcome", string(out.State)), zap.Error(err))
		return
	}
	r.count(d, due.Action, Result(out))
	logOutcome(log, out)
}

// logOutcome writes one line for how an action settled.
func logOutcome(log *zap.Logger, out model.Outcome) {
	switch out.State {
	case model.StateDelivered:
		if out.ResultTS == "" { // no message to point at
			log.Info("action delivered")
		} else {
			log.Info("action delivered", zap.String("channel", out.ResultChannel), zap.String("slack_ts", out.ResultTS))
		}
	case model.StateFailed:
		log.Error("action failed", zap.String("err", out.Error))
	case model.StateSuperseded:
		log.Info("action superseded", zap.String("why", out.Error))
	default:
		if out.Refund {
			log.Debug("action waits", zap.String("why", out.Error))
		} else {
			log.Warn("action will be retried", zap.String("err", out.Error), zap.Time("next_attempt", out.NextAttempt))
		}
	}
}

// errClaimEnds stops an attempt before its claim may be taken over. It is
// a deadline, so that whatever a client wraps it in classifies as one.
var errClaimEnds = fmt.Errorf("the attempt reached the end of its claim (%w)", context.DeadlineExceeded)

// attemptEnd is how an attempt ended: its outcome, and what it said of
// its destination (for the lane's breaker, with why).
type attemptEnd struct {
	out   model.Outcome
	reach Reach
	why   string
}

// settled is an attempt that asked nothing of its destination.
func settled(o model.Outcome) attemptEnd { return attemptEnd{out: o} }

// withinClaim runs the attempt so that it ends before another process may
// take the claim over (state.claim_ttl after claimed), leaving a margin for
// its last request to land or die. Otherwise a slow attempt (a
// cancel_and_nudge waiting up to 30 s for kandev to settle the cancel, a
// fence and a post each as long as their timeouts) could still be acting
// when a takeover begins, and both would act. Cut short, it is retried as
// an attempt that may have landed: the next one looks for evidence first.
func (d *Deliverer) withinClaim(ctx context.Context, claimed time.Time, lr *laneRun, cl model.Claim, e model.Episode, log *zap.Logger) attemptEnd {
	ttl := d.ClaimTTL
	actx, cancel := context.WithDeadlineCause(ctx, claimed.Add(ttl-min(time.Second, ttl/10)), errClaimEnds)
	defer cancel()
	end := d.attempt(actx, lr, cl, e, log)
	if errors.Is(context.Cause(actx), errClaimEnds) && end.out.State == model.StatePending {
		end.out.Error = fmt.Sprintf("stopped before another process may take its claim over (state.claim_ttl %s): %s", ttl, end.out.Error)
	}
	if ctx.Err() != nil {
		end.reach = Unheard // the cycle's time ran out: nothing said of the destination
	}
	return end
}

// ResolveWait is how long a keyed outlet's resolve waits for its
// episode's earlier steps to the same destination to settle (a step cut
// short is completed with its key), so that the receiver hears of them
// first; then it goes anyway, its higher sequence saying it is the last.
const ResolveWait = 15 * time.Minute

// keyedResolveWaited says whether a is a keyed outlet's resolve that has
// waited ResolveWait for its episode's earlier steps: it goes now.
func keyedResolveWaited(entry Entry, a model.Action, now time.Time) bool {
	return entry.Keyed && Resolving(a) && now.Sub(a.CreatedAt) >= ResolveWait
}

// attempt runs one claimed action and says how it ended.
func (d *Deliverer) attempt(ctx context.Context, lr *laneRun, cl model.Claim, e model.Episode, log *zap.Logger) attemptEnd {
	a, now := cl.Action, d.Now()
	entry, ok := d.Outlets[a.Kind]
	if !ok {
		return settled(model.Outcome{State: model.StateFailed, Error: fmt.Sprintf("nothing delivers %s actions now (was the config changed?)", a.Kind)})
	}
	if out, held := d.heldDestination(ctx, entry, a, now, log); held {
		return settled(out)
	}
	at := Attempt{Action: a, Episode: e, MayHaveLanded: cl.Takeover || a.Uncertain, Now: now, Log: log}
	if a.ParentKey != "" {
		p, err := d.Store.Action(ctx, a.ParentKey)
		if err != nil {
			return settled(released(a, now.Add(5*time.Second), err.Error()))
		}
		if Orphaned(a, p) {
			return settled(model.Outcome{State: model.StateSuperseded, Error: "its step never went out: nothing to resolve"})
		}
		switch p.State {
		case model.StateDelivered:
			at.Parent = &p
		case model.StatePending, model.StateClaimed:
			if !keyedResolveWaited(entry, a, now) {
				return settled(released(a, now.Add(5*time.Second), "waiting for the first message"))
			}
		default: // a first message that never went out: none (a reply goes top-level)
			at.Unsent = &p
		}
	}
	if entry.Keyed && Resolving(a) && !keyedResolveWaited(entry, a, now) {
		n, err := d.Store.Unsettled(ctx, a.EpisodeID, a.Kind, a.Channel)
		if err != nil {
			return settled(released(a, now.Add(5*time.Second), err.Error()))
		}
		if n > 0 {
			return settled(released(a, now.Add(5*time.Second), "waiting for the episode's earlier steps to this destination to settle"))
		}
	}
	if f, ok := entry.Outlet.(Finder); ok && at.MayHaveLanded {
		if s, found := f.Find(ctx, at); found {
			if s.Outcome != nil && s.Outcome.State == model.StateDelivered {
				log.Info("found an earlier attempt; settled from evidence", zap.String("slack_ts", s.Outcome.ResultTS))
			}
			return attemptEnd{out: Settle(a, s, now), reach: ReachOf(s, ctx.Err()), why: errWords(s)}
		}
	}
	if Fences(entry, a, at.MayHaveLanded) {
		if !e.ResolvedAt.IsZero() {
			return settled(model.Outcome{State: model.StateSuperseded, Error: "the episode resolved before delivery"})
		}
		f, err := d.Fence(ctx, e)
		if err != nil {
			// A read failed; nothing was sent.
			return settled(Settle(a, Error(fmt.Errorf("fence: %w", err), Verdict{Retry: true, Code: "fence"}), now))
		}
		if f == nil {
			return settled(model.Outcome{State: model.StateSuperseded, Error: "the finding no longer holds (turn moved on or question answered)"})
		}
		at.Current = f
	}
	if entry.Paced {
		lr.sent++
	}
	s := entry.Outlet.Send(ctx, at)
	// A wait the answer asks for (Retry-After) counts from when the answer
	// came, not from when the attempt began: a slow answer would otherwise
	// open the gate before the service's own window ends.
	answered := d.Now()
	reach := ReachOf(s, ctx.Err())
	why := errWords(s)
	if reach == GoneForGood {
		why = "its receiver answered " + s.Verdict.Code + " Gone"
		s.Err = fmt.Errorf("%w; %s", s.Err, HoldWords(model.Hold{Outlet: lr.hold.Outlet, Destination: lr.hold.Destination, Reason: why, Since: answered}))
	}
	if s.Outcome == nil && s.Verdict.RateLimited && entry.Paced {
		if entry.RateLimited != nil {
			entry.RateLimited(metrics.LimitedByService)
		}
		until := answered.Add(max(s.Verdict.After, time.Second))
		lr.gate, lr.gateRead = until, true
		if err := d.Store.CloseGate(ctx, entry.Gate+a.Channel, until); err != nil {
			log.Error("record the channel's Retry-After", zap.Error(err))
		}
	}
	return attemptEnd{out: Settle(a, s, answered), reach: reach, why: why}
}

// errWords is what an answer's error says, on one line, for a breaker's
// reason.
func errWords(s Sent) string {
	if s.Err == nil {
		return ""
	}
	return term.OneLine(s.Err)
}

// Resolving says whether a is a resolve: it tells an outlet that its
// episode cleared, so it is never fenced on the finding (which no longer
// holds by then).
func Resolving(a model.Action) bool {
	return a.Seq == "resolve" || strings.HasPrefix(a.Seq, "resolve/")
}

// Orphaned says whether a is a resolve for an outlet (not Slack's edit,
// decided apart) whose step, parent, never went out: superseded or failed
// without ever possibly landing. The planner decides a resolve for a step
// that may have landed; that step can still be superseded after (fenced
// on another replica), and then the outlet never heard of the episode.
func Orphaned(a, parent model.Action) bool {
	if !Resolving(a) || a.Kind == model.ActionSlackUpdate {
		return false
	}
	return parent.State == model.StateSuperseded || (parent.State == model.StateFailed && !parent.Uncertain)
}

// Fences says whether an attempt at a re-checks its finding first and is
// superseded when it no longer holds. A resolve never is. Nor is an
// attempt at a keyed outlet that may already have landed: its receiver may
// hold it, so it is completed with its key (the receiver deduplicates)
// rather than recorded as never sent — and its resolve, which waits for
// it, then follows it.
func Fences(entry Entry, a model.Action, mayHaveLanded bool) bool {
	return entry.Fenced && !Resolving(a) && (!entry.Keyed || !mayHaveLanded)
}
