package notify

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/model"
)

// heldDestination fails action a without sending it when its destination
// is held in the ledger (a webhook whose receiver answered 410 Gone):
// counted, and saying what reopens it. A hold that cannot be read lets
// the attempt go on: the receiver answers for itself.
func (d *Deliverer) heldDestination(ctx context.Context, entry Entry, a model.Action, now time.Time, log *zap.Logger) (model.Outcome, bool) {
	dest := destination(entry, a)
	if dest == "" {
		return model.Outcome{}, false
	}
	h, held, err := d.Store.HoldOf(ctx, string(a.Kind), dest, now)
	if err != nil {
		log.Warn("read the destination's hold; sending", zap.Error(err))
		return model.Outcome{}, false
	}
	if !held {
		return model.Outcome{}, false
	}
	d.Metrics.ClosedActions.WithLabelValues(string(a.Kind)).Inc()
	return model.Outcome{State: model.StateFailed, Error: HoldWords(h)}, true
}

// HoldWords says why nothing goes to a held destination, and what
// reopens it.
func HoldWords(h model.Hold) string {
	return fmt.Sprintf("%s %s is closed since %s (%s): nothing is sent to it until its URL changes in the config or `watchdogd episodes retry` reopens it",
		h.Outlet, DestinationName(h.Destination), h.Since.UTC().Format(time.RFC3339), h.Reason)
}

// DestinationName is a destination key's name for people: a webhook's
// name, without the hash of its URL.
func DestinationName(key string) string {
	name, _, _ := strings.Cut(key, "#")
	return name
}

// holdIfGone holds a's destination when its answer s says it is gone for
// good, so that the actions queued for it fail without being sent, and
// says so in what a's failure records.
func (d *Deliverer) holdIfGone(ctx context.Context, entry Entry, a model.Action, s Sent, now time.Time, log *zap.Logger) Sent {
	dest := destination(entry, a)
	if s.Outcome != nil || !s.Verdict.Gone || dest == "" {
		return s
	}
	h := model.Hold{Outlet: string(a.Kind), Destination: dest, Reason: "its receiver answered " + s.Verdict.Code + " Gone", Since: now}
	if err := d.Store.Hold(ctx, h); err != nil {
		log.Error("record that the destination is gone", zap.Error(err))
		return s
	}
	log.Error("destination closed: its receiver says it is gone; its actions fail until its URL changes or watchdogd episodes retry reopens it",
		zap.String("destination", DestinationName(dest)))
	s.Err = fmt.Errorf("%w; %s", s.Err, HoldWords(h))
	return s
}

func destination(entry Entry, a model.Action) string {
	if entry.Destination == nil {
		return ""
	}
	return entry.Destination(a)
}
