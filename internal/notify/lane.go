package notify

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/policy"
)

// LaneWorkers is how many lanes of one outlet deliver at once, unless a
// Deliverer says otherwise: each outlet has its own, so that one outlet's
// hung lanes never take the workers another outlet's need, and all of
// them together are bounded by the few outlets there are.
const LaneWorkers = 8

// run is one cycle's delivery: what the lanes share.
type run struct {
	silences []policy.Silence
	mu       sync.Mutex
	counts   map[model.Result]int
	lost     sync.Once
}

// laneRun is one lane's state while a cycle or a click delivers it: its
// channel's gate and budget, and its breaker's hold. Only its worker
// touches it.
type laneRun struct {
	lane Lane
	// hold is the lane's breaker (Since zero: none), read once when the
	// lane starts and kept as its attempts change it; its Outlet and
	// Destination name it in the ledger either way.
	hold     model.Hold
	holdErr  error
	probing  bool
	sent     int
	gate     time.Time
	gateErr  error
	gateRead bool
	// once: a click tried though the breaker holds; an attempt that would
	// be retried fails instead, so that the person is told.
	once bool
}

// Deliver claims and delivers every due action, each lane (a
// destination: a Slack channel, a webhook, an Alertmanager member,
// kandev) on its own, concurrently, so that a destination that hangs or
// is down never holds up another; each lane may use the cycle's whole
// time. Within a lane first attempts go before retries. Each action was
// saved before this runs; each is claimed by compare-and-set before it is
// sent; each outcome is recorded, logged and counted into counts.
func (d *Deliverer) Deliver(ctx context.Context, silences []policy.Silence, counts map[model.Result]int) {
	due, err := d.Store.DueActions(ctx, d.Now(), d.ClaimTTL)
	if err != nil {
		d.Log.Error("list due actions", zap.Error(err))
		return
	}
	r := &run{silences: silences, counts: counts}
	var wg sync.WaitGroup
	for _, lanes := range byOutlet(Queues(due, d.Outlets)) {
		var next atomic.Int64
		for range min(d.workers(), len(lanes)) {
			wg.Go(func() {
				for i := int(next.Add(1) - 1); i < len(lanes); i = int(next.Add(1) - 1) {
					d.runLane(ctx, r, lanes[i])
				}
			})
		}
	}
	wg.Wait()
}

func (d *Deliverer) workers() int {
	if d.LaneWorkers > 0 {
		return d.LaneWorkers
	}
	return LaneWorkers
}

// byOutlet groups lanes by outlet, each group in the order given.
func byOutlet(qs []LaneQueue) [][]LaneQueue {
	index := map[string]int{}
	var out [][]LaneQueue
	for _, q := range qs {
		i, ok := index[q.Lane.Outlet]
		if !ok {
			i = len(out)
			index[q.Lane.Outlet] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], q)
	}
	return out
}

// runLane delivers one lane's actions in order, until they are done, the
// cycle's time ends, the lease is lost, or its breaker shuts (the rest
// wait, deferred).
func (d *Deliverer) runLane(ctx context.Context, r *run, q LaneQueue) {
	lr := d.openLane(ctx, q.Lane, q.Due[0].Action)
	for i, due := range q.Due {
		if ctx.Err() != nil {
			return // cycle_timeout: the rest stay pending, due next cycle
		}
		if d.MayAct != nil && !d.MayAct() {
			r.lost.Do(func() { d.Log.Warn("lost the leader lease; leaving the remaining actions to the leader") })
			return
		}
		if d.admit(ctx, lr) == Shut {
			for _, w := range q.Due[i:] {
				r.count(d, w.Action, model.ResultDeferred)
			}
			d.Log.Debug("lane held by its breaker; its actions wait", zap.String("outlet", lr.lane.Outlet),
				zap.String("destination", DestinationName(lr.hold.Destination)), zap.Int("actions", len(q.Due)-i), zap.Time("until", lr.hold.Until))
			return
		}
		d.one(ctx, r, lr, due)
	}
}

// openLane reads the lane's breaker. One that cannot be read is taken as
// none: the destination answers for itself.
func (d *Deliverer) openLane(ctx context.Context, l Lane, a model.Action) *laneRun {
	lr := &laneRun{lane: l}
	dest := l.Destination
	if e, ok := d.Outlets[a.Kind]; ok {
		if k := destination(e, a); k != "" {
			dest = k
		}
	}
	h, _, err := d.Store.HoldOf(ctx, l.Outlet, dest, d.Now())
	if err != nil {
		d.Log.Warn("read the lane's breaker; delivering", zap.String("outlet", l.Outlet), zap.Error(err))
		h = model.Hold{}
	}
	h.Outlet, h.Destination = l.Outlet, dest
	lr.hold, lr.holdErr = h, err
	return lr
}

// admit is what the lane's breaker lets through now. When its backoff has
// ended, one process takes the probe (Store.Probe) and keeps it until an
// attempt reaches the destination; every other waits.
func (d *Deliverer) admit(ctx context.Context, lr *laneRun) Gate {
	if lr.probing {
		return Probe // the last attempt asked nothing of the destination
	}
	now := d.Now()
	g := GateOf(lr.hold, now)
	if g != Probe {
		return g
	}
	ok, err := d.Store.Probe(ctx, lr.hold.Outlet, lr.hold.Destination, now, now.Add(d.ClaimTTL))
	if err != nil || !ok {
		lr.hold.Until = now.Add(d.ClaimTTL) // another process probes, or may
		return Shut
	}
	lr.probing = true
	d.Log.Info("lane probed: its backoff ended; one attempt tells whether it answers", zap.String("outlet", lr.hold.Outlet),
		zap.String("destination", DestinationName(lr.hold.Destination)))
	return Probe
}

// trip records in the ledger what an attempt did to its lane's breaker,
// and logs each transition once.
func (d *Deliverer) trip(ctx context.Context, lr *laneRun, reach Reach, why string, log *zap.Logger) {
	if reach == Unheard {
		return // a probe goes on with the lane's next action
	}
	lr.probing = false
	next, t := Breaker(lr.hold, reach, why, d.Now())
	var err error
	switch t {
	case NoChange:
		return
	case LaneUp:
		err = d.Store.Unhold(context.WithoutCancel(ctx), lr.hold.Outlet, lr.hold.Destination)
		next.Outlet, next.Destination = lr.hold.Outlet, lr.hold.Destination
	default:
		err = d.Store.Hold(context.WithoutCancel(ctx), next)
	}
	if err != nil {
		log.Error("record the lane's breaker", zap.String("transition", string(t)), zap.Error(err))
	}
	lr.hold = next
	fields := []zap.Field{zap.String("outlet", next.Outlet), zap.String("destination", DestinationName(next.Destination))}
	switch t {
	case LaneDown:
		log.Warn("lane down: its destination did not answer; its actions wait until one probe after the backoff",
			append(fields, zap.String("why", why), zap.Time("until", next.Until))...)
	case StillDown:
		log.Debug("lane still down: the probe did not answer", append(fields, zap.Time("until", next.Until), zap.Int("failures", next.Failures))...)
	case LaneUp:
		log.Info("lane up: its destination answered", fields...)
	case LaneGone:
		log.Error("destination closed: its receiver says it is gone; its actions fail until its URL changes or watchdogd episodes retry reopens it", fields...)
	}
}

// count adds an action's result to the cycle's counts and metrics.
func (r *run) count(d *Deliverer, a model.Action, result model.Result) {
	r.mu.Lock()
	r.counts[result]++
	r.mu.Unlock()
	d.Metrics.Action(a.Kind, result)
}

// heldWords is why a click's action, tried once though its lane's
// breaker holds, is not tried again.
func heldWords(h model.Hold, err string) string {
	return fmt.Sprintf("%s is not answering (its lane is held since %s): tried once, not again: %s",
		laneName(h), h.Since.UTC().Format(time.RFC3339), err)
}

// laneName is a held lane's name for people: "kandev", "webhook ops",
// "slack C0123".
func laneName(h model.Hold) string {
	if name := DestinationName(h.Destination); name != h.Outlet {
		return h.Outlet + " " + name
	}
	return h.Outlet
}
