// Package notify is watchdogd's exactly-once delivery protocol, written
// once for every outlet: each due action is claimed by compare-and-set,
// fenced (its finding must still hold in kandev right before it goes out),
// sent through its outlet, and settled from what the outlet reports — an
// attempt that may have landed is retried as such, and its next attempt
// looks for evidence of it first. See docs/architecture.md, "Delivery".
//
// An outlet is one way an action goes out (Slack, a kandev nudge, the log,
// the console); it implements Outlet and is registered for its action
// kind. Nothing here knows which outlet does what beyond the Entry it was
// registered with.
package notify

import (
	"context"
	"fmt"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
	"go.uber.org/zap"
)

// Outlet delivers one kind of action. Render runs when the action is
// decided, and its text is frozen in the ledger: what goes out is what was
// decided, whenever it goes. Send performs one claimed attempt: when an
// earlier one may have landed (Attempt.MayHaveLanded) it first looks for
// evidence of it, then sends with the action's key (its idempotency key),
// and says how it went, classifying its own errors.
type Outlet interface {
	Render(r Rendering) (string, error)
	Send(ctx context.Context, at Attempt) Sent
}

// Finder is an Outlet that can look for evidence that an earlier attempt
// landed: a message carrying the action's key. When an attempt may have
// landed, the protocol asks before anything else (before the fence: a
// post that landed is delivered, whatever has happened since). Find
// reports found with Delivered, or a failed lookup with Error; not found,
// it reports false.
type Finder interface {
	Find(ctx context.Context, at Attempt) (Sent, bool)
}

// Previewer is an Outlet that can say, for a terminal, what an action
// would do (`watchdogd demo`, `run --dry-run`): where it goes and what it
// says, escaped for the terminal (a message carries what agents wrote).
// parent names the first message a reply goes under or an edit changes,
// "" when there is none. The console shows an outlet that is not one by
// its action kind and frozen text.
type Previewer interface {
	Preview(a model.Action, e model.Episode, parent string) (string, error)
}

// Rendering is what an action is rendered from.
type Rendering struct {
	// Action is the decision; its Body is what Render returns.
	Action model.Action
	// Episode is the action's episode, with its stored actions (an edit
	// renders on top of the first message's frozen body).
	Episode model.Episode
	// Finding is the episode's finding in this cycle's scan, or as the
	// episode last saw it when it is resolving.
	Finding scan.Finding
	// Reason says how the episode cleared, for a resolve.
	Reason string
	// Text is what a nudge says: the kind's policy text.
	Text string
	Now  time.Time
}

// Attempt is one claimed attempt of an action.
type Attempt struct {
	Action  model.Action
	Episode model.Episode
	// Parent is the delivered first message a reply or an edit goes to;
	// nil when the action has none, or the first message never went out.
	Parent *model.Action
	// Unsent is that action when it failed or was superseded instead:
	// what an action that tells how it ended says (a click's story).
	Unsent *model.Action
	// MayHaveLanded: an earlier attempt may have been processed (a
	// timeout, a 5xx, a crashed holder whose claim this one took over).
	MayHaveLanded bool
	// Current is the episode's finding as the fence read it right before
	// this attempt (its kind may have changed); nil when the outlet's
	// entry is not fenced.
	Current *scan.Finding
	Now     time.Time
	// Log is the protocol's logger for this action: its lines carry the
	// action's key, kind, session and turn.
	Log *zap.Logger
}

// Logger is at.Log, or one that discards when there is none (an attempt
// built by hand).
func (at Attempt) Logger() *zap.Logger {
	if at.Log == nil {
		return zap.NewNop()
	}
	return at.Log
}

// Sent is how an attempt went, as the outlet says.
type Sent struct {
	// Outcome, when set, settles the attempt as the outlet decided:
	// delivered (with where the message went), superseded, failed, or
	// given back untried to wait.
	Outcome *model.Outcome
	// Err is what failed when Outcome is nil; Verdict says what it means.
	Err     error
	Verdict Verdict
	// MayHaveLanded: part of the side effect may have gone out before Err
	// (a cancel sent before its nudge failed): the action stays owed as
	// one that may have landed.
	MayHaveLanded bool
}

// Delivered settles an attempt as delivered; channel and ts say where a
// message went (empty for outlets with no message to point at).
func Delivered(channel, ts string) Sent {
	return Sent{Outcome: &model.Outcome{State: model.StateDelivered, ResultChannel: channel, ResultTS: ts}}
}

// Superseded settles an attempt as no longer owed, saying why.
func Superseded(why string) Sent {
	return Sent{Outcome: &model.Outcome{State: model.StateSuperseded, Error: why}}
}

// Failed settles an attempt as failed for good, saying why.
func Failed(why string) Sent {
	return Sent{Outcome: &model.Outcome{State: model.StateFailed, Error: why}}
}

// Wait gives an attempt back untried, due again at next: it waits, as a
// held action does, and keeps whether an earlier attempt may have landed.
func Wait(a model.Action, next time.Time, why string) Sent {
	o := released(a, next, why)
	return Sent{Outcome: &o}
}

// Error reports an error with the verdict the outlet gave it.
func Error(err error, v Verdict) Sent { return Sent{Err: err, Verdict: v} }

// released is an attempt given back untried.
func released(a model.Action, next time.Time, why string) model.Outcome {
	return model.Outcome{State: model.StatePending, NextAttempt: next, Error: why, Uncertain: a.Uncertain, Refund: true}
}

// Entry is an outlet as registered, with how the protocol treats its
// actions.
type Entry struct {
	Outlet Outlet
	// Paced: silences and quiet hours hold its actions, and a channel's
	// Retry-After closes the channel to them (Slack).
	Paced bool
	// Name names the outlet's lanes and its breakers' holds ("slack",
	// "webhook", "alertmanager", "kandev", "log", "ledger"; "" takes the
	// action kind). Every entry of one outlet shares it.
	Name string
	// To, when set, names the lane an action goes out in within its
	// outlet (kandev: one lane; an Alertmanager member); nil takes the
	// action's channel.
	To func(a model.Action) string
	// Gate prefixes a paced outlet's channel where its gate is kept, so
	// that outlets whose channels are named alike ("ops": a Slack
	// channel, a webhook) never close each other's. Slack's is "" (its
	// gates are stored under the bare channel).
	Gate string
	// Budget, when set, bounds a paced outlet's actions per channel per
	// cycle (slack.max_messages_per_cycle), read as each cycle delivers.
	Budget func() int
	// RateLimited, when set, hears of each rate-limit answer
	// (metrics.LimitedByService) and each action the budget holds back
	// (metrics.LimitedByBudget): a metric.
	RateLimited func(reason string)
	// Fenced: right before each attempt the protocol re-reads kandev and
	// supersedes the action when its finding no longer holds or its
	// episode resolved. An outlet that fences itself (a cancel whose
	// nudge stays owed after the cancel cleared the finding) is not fenced
	// here, and a resolve never is (Resolving).
	Fenced bool
	// Keyed: the receiver deduplicates on the action key, and there is no
	// evidence to look for (a webhook). An attempt that may have landed is
	// sent again with its key — at least once — even when its finding has
	// cleared since.
	Keyed bool
	// Resolve is the action kind that tells this outlet an episode it
	// heard of cleared ("" for none; Slack's edit is decided apart). The
	// policy decides one per channel the outlet sent a step to.
	Resolve model.ActionKind
	// Destination, when set, names where an action goes for holds (a
	// webhook: its name and a hash of its URL, so that a new URL is a new
	// destination); nil holds the lane's destination. An answer whose
	// verdict is Gone closes it for good (an action to it fails without
	// being sent); a timeout holds it for a backoff (its lane's breaker).
	Destination func(a model.Action) string
}

// Registry maps each action kind to its outlet.
type Registry map[model.ActionKind]Entry

// Register adds an outlet for an action kind.
func (r Registry) Register(kind model.ActionKind, e Entry) { r[kind] = e }

// Render renders an action through its outlet.
func (r Registry) Render(rd Rendering) (string, error) {
	e, ok := r[rd.Action.Kind]
	if !ok {
		return "", fmt.Errorf("no outlet for %s actions", rd.Action.Kind)
	}
	return e.Outlet.Render(rd)
}
