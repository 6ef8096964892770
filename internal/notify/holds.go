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
// is closed for good in the ledger (a webhook whose receiver answered 410
// Gone): counted, and saying what reopens it. A hold that cannot be read
// lets the attempt go on: the receiver answers for itself. A breaker's
// hold is its lane's (runLane): its actions wait, they do not fail.
func (d *Deliverer) heldDestination(ctx context.Context, entry Entry, a model.Action, now time.Time, log *zap.Logger) (model.Outcome, bool) {
	dest := destination(entry, a)
	if dest == "" {
		return model.Outcome{}, false
	}
	h, held, err := d.Store.HoldOf(ctx, LaneOf(d.Outlets, a).Outlet, dest, now)
	if err != nil {
		log.Warn("read the destination's hold; sending", zap.Error(err))
		return model.Outcome{}, false
	}
	if !held || !h.Gone() {
		return model.Outcome{}, false
	}
	d.Metrics.ClosedActions.WithLabelValues(string(a.Kind)).Inc()
	return model.Outcome{State: model.StateFailed, Error: HoldWords(h)}, true
}

// HoldWords says why nothing goes to a held destination, and what
// reopens it: for one gone for good, its URL changing or an operator;
// for a breaker, its probe when the backoff ends.
func HoldWords(h model.Hold) string {
	if !h.Gone() {
		return fmt.Sprintf("%s is not answering since %s (%s): its actions wait; one probe at %s, then it delivers again once it answers",
			laneName(h), h.Since.UTC().Format(time.RFC3339), h.Reason, h.Until.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("%s %s is closed since %s (%s): nothing is sent to it until its URL changes in the config or `watchdogd episodes retry` reopens it",
		h.Outlet, DestinationName(h.Destination), h.Since.UTC().Format(time.RFC3339), h.Reason)
}

// DestinationName is a destination key's name for people: a webhook's
// name, without the hash of its URL.
func DestinationName(key string) string {
	name, _, _ := strings.Cut(key, "#")
	return name
}

func destination(entry Entry, a model.Action) string {
	if entry.Destination == nil {
		return ""
	}
	return entry.Destination(a)
}
