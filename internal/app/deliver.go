package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
)

// deliveryRun is one cycle's delivery state: per-channel budgets and gates.
type deliveryRun struct {
	silences []policy.Silence
	sent     map[string]int
	gates    map[string]time.Time
	counts   map[model.Result]int
}

// deliver claims and delivers every due action, oldest first. Each action is
// saved before this runs; each is claimed by compare-and-set before it is
// sent; each outcome is recorded, logged and counted.
func (c *Cycle) deliver(ctx context.Context, silences []policy.Silence, counts map[model.Result]int) {
	now := c.Now()
	due, err := c.Store.DueActions(ctx, now, c.Config.State.ClaimTTL)
	if err != nil {
		c.Log.Error("list due actions", zap.Error(err))
		return
	}
	run := &deliveryRun{silences: silences, sent: map[string]int{}, gates: map[string]time.Time{}, counts: counts}
	for _, d := range due {
		if ctx.Err() != nil {
			return // cycle_timeout: the rest stay pending, due next cycle
		}
		if c.MayAct != nil && !c.MayAct() {
			c.Log.Warn("lost the leader lease; leaving the remaining actions to the leader")
			return
		}
		c.deliverOne(ctx, run, d)
	}
}

func (c *Cycle) count(run *deliveryRun, a model.Action, result model.Result) {
	run.counts[result]++
	c.Metrics.Action(a.Kind, result)
}

// held says whether a Slack action waits this cycle (silence, quiet hours,
// a 429 gate, the per-cycle budget), without claiming it.
func (c *Cycle) held(ctx context.Context, run *deliveryRun, d model.Due) (bool, string) {
	if !d.IsSlack() || c.Slack == nil {
		return false, ""
	}
	if deferred, why := policy.Deferred(d.Episode, run.silences, c.Config.QuietHours, c.Now()); deferred {
		return true, why
	}
	gate, ok := run.gates[d.Channel]
	if !ok {
		var err error
		if gate, err = c.Store.GateUntil(ctx, d.Channel); err != nil {
			return true, "channel gate unreadable"
		}
		run.gates[d.Channel] = gate
	}
	if c.Now().Before(gate) {
		return true, "Slack asked to wait (Retry-After)"
	}
	if c.Config.Slack != nil && run.sent[d.Channel] >= c.Config.Slack.MaxMessagesPerCycle {
		c.Metrics.SlackRateLimited.Inc()
		return true, "per-cycle budget spent"
	}
	return false, ""
}

func (c *Cycle) deliverOne(ctx context.Context, run *deliveryRun, d model.Due) {
	log := c.Log.With(zap.String("key", d.Key), zap.String("action", string(d.Kind)), zap.String("kind", string(d.Episode.Kind)),
		zap.String("session_id", d.Episode.SessionID), zap.String("turn_id", d.Episode.TurnID))
	if held, why := c.held(ctx, run, d); held {
		c.count(run, d.Action, model.ResultDeferred)
		log.Debug("action deferred", zap.String("why", why))
		return
	}
	token := uuid.NewString()
	claimed := time.Now()
	claim, ok, err := c.Store.Claim(ctx, d.Key, c.Holder, token, c.Now(), c.Config.State.ClaimTTL)
	if err != nil {
		log.Error("claim action; nothing sent", zap.Error(err))
		return
	}
	if !ok {
		return // another process has it
	}
	start := time.Now()
	out := c.attemptWithinClaim(ctx, claimed, run, claim, d.Episode, log)
	if out.State == model.StateDelivered {
		c.Metrics.Delivered(d.Kind, time.Since(start))
	}
	if err := c.Store.Settle(context.WithoutCancel(ctx), d.Key, token, out, c.Now()); err != nil {
		// The outcome is lost, not the action: the claim goes stale and the
		// next holder settles it from evidence.
		log.Error("record action outcome", zap.String("outcome", string(out.State)), zap.Error(err))
		return
	}
	result := model.Result(out.State) // delivered, failed, superseded
	if out.State == model.StatePending {
		result = model.ResultRetried
		if out.Refund { // released untried: it waits, as a held action does
			result = model.ResultDeferred
		}
	}
	c.count(run, d.Action, result)
	switch out.State {
	case model.StateDelivered:
		if out.ResultTS == "" { // not Slack: no message to point at
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

// attemptWithinClaim runs attempt so that it ends before another process
// may take the claim over (state.claim_ttl after claimed), leaving a
// margin for its last request to land or die. Otherwise a slow attempt
// (a cancel_and_nudge waiting up to 30 s for kandev to settle the cancel,
// a fence and a post each as long as their timeouts) could still be
// acting when a takeover begins, and both would act. Cut short, it is
// retried as an attempt that may have landed: the next one looks for
// evidence first.
func (c *Cycle) attemptWithinClaim(ctx context.Context, claimed time.Time, run *deliveryRun, cl model.Claim, e model.Episode, log *zap.Logger) model.Outcome {
	ttl := c.Config.State.ClaimTTL
	actx, cancel := context.WithDeadlineCause(ctx, claimed.Add(ttl-min(time.Second, ttl/10)), errClaimEnds)
	defer cancel()
	out := c.attempt(actx, run, cl, e, log)
	if errors.Is(context.Cause(actx), errClaimEnds) && out.State == model.StatePending {
		out.Error = fmt.Sprintf("stopped before another process may take its claim over (state.claim_ttl %s): %s", ttl, out.Error)
	}
	return out
}

// attempt runs one claimed action and says how it ended.
func (c *Cycle) attempt(ctx context.Context, run *deliveryRun, cl model.Claim, e model.Episode, log *zap.Logger) model.Outcome {
	a := cl.Action
	now := c.Now()
	wait := func(d time.Duration, why string) model.Outcome { return released(a, now.Add(d), why) }
	var parent model.Action
	if a.ParentKey != "" {
		p, err := c.Store.Action(ctx, a.ParentKey)
		if err != nil {
			return wait(5*time.Second, err.Error())
		}
		switch p.State {
		case model.StateDelivered:
			parent = p
		case model.StatePending, model.StateClaimed:
			return wait(5*time.Second, "waiting for the first message")
		default:
			if a.Kind == model.ActionSlackUpdate {
				return model.Outcome{State: model.StateSuperseded, Error: "the first message was never sent"}
			}
			// The thread's first message never went out: post top-level.
		}
	}
	// Settle from evidence first when an earlier attempt may have landed.
	if a.Kind == model.ActionSlack && (cl.Takeover || a.Uncertain) && c.Finder != nil {
		ts, found, err := c.Finder.Find(ctx, a.Channel, parent.ResultTS, a.Key, a.CreatedAt)
		if err != nil {
			return c.failed(now, a, err, log)
		}
		if found {
			log.Info("found an earlier attempt in Slack; settled from evidence", zap.String("slack_ts", ts))
			return model.Outcome{State: model.StateDelivered, ResultChannel: a.Channel, ResultTS: ts}
		}
	}
	// A cancel_and_nudge whose cancel may have gone through (an earlier
	// attempt sent it, or a crashed holder may have) cleared the finding
	// itself, yet its nudge is still owed: cancelAndNudge fences it on the
	// session's turn instead.
	cancelMayHaveLanded := a.Kind == model.ActionCancelAndNudge && a.Uncertain
	if a.Kind != model.ActionSlackUpdate && !cancelMayHaveLanded {
		if !e.ResolvedAt.IsZero() {
			return model.Outcome{State: model.StateSuperseded, Error: "the episode resolved before delivery"}
		}
		f, err := c.fence(ctx, e)
		if err != nil {
			out := c.failed(now, a, fmt.Errorf("fence: %w", err), log)
			out.Uncertain = a.Uncertain // a read failed; nothing was sent
			return out
		}
		if f == nil {
			return model.Outcome{State: model.StateSuperseded, Error: "the finding no longer holds (turn moved on or question answered)"}
		}
		if (a.Kind == model.ActionNudge || a.Kind == model.ActionCancelAndNudge) && model.HumanOwesAnswer(f.Kind) {
			// Decided for a question kandev hid; kandev shows it again, and
			// a nudge now would destroy it.
			return model.Outcome{State: model.StateSuperseded, Error: "a person owes an answer to the question now: a nudge would destroy it in kandev"}
		}
	}
	return c.send(ctx, run, a, e, parent, log)
}

// send performs the side effect.
func (c *Cycle) send(ctx context.Context, run *deliveryRun, a model.Action, e model.Episode, parent model.Action, log *zap.Logger) model.Outcome {
	now := c.Now()
	var err error
	switch a.Kind {
	case model.ActionSlack, model.ActionSlackUpdate:
		m, out := c.slackMessage(a, e)
		if out != nil {
			return *out
		}
		if a.Kind == model.ActionSlack && now.Sub(a.CreatedAt) >= notify.LateAfter {
			m = notify.SentLate(m, a.CreatedAt)
		}
		run.sent[a.Channel]++
		if out, err = c.sendSlack(ctx, a, parent, m, log); out != nil {
			return *out
		}
	case model.ActionNudge:
		err = c.Kandev.AddMessage(ctx, e.TaskID, e.SessionID, decodeText(a.Body), kandev.ClientMessageID(a.Key))
	case model.ActionCancelAndNudge:
		var cancelled bool
		cancelled, err = c.cancelAndNudge(ctx, a, e)
		switch {
		case errors.Is(err, errNudgeNotOwed), errors.Is(err, errSessionEnded):
			return model.Outcome{State: model.StateSuperseded, Error: err.Error()}
		case errors.Is(err, errTurnRunsOn): // a wait, not a failure: nothing was tried
			return released(a, now.Add(time.Minute), err.Error()) // a.Uncertain: the nudge stays owed
		}
		// Once the cancel is sent the nudge is owed whatever follows: an
		// uncertain action survives its episode's resolve and is not
		// fenced on the finding the cancel cleared.
		a.Uncertain = a.Uncertain || cancelled
	default:
		if c.LogActions != nil {
			fmt.Fprintf(c.LogActions, "→ log: %s\n", decodeText(a.Body))
		} else {
			log.Warn("watchdogd finding", zap.String("text", decodeText(a.Body)), zap.String("task_id", e.TaskID))
		}
	}
	if err == nil {
		return model.Outcome{State: model.StateDelivered}
	}
	v := notify.Classify(err)
	if v.RateLimited && a.IsSlack() {
		c.Metrics.SlackRateLimited.Inc()
		until := now.Add(max(v.After, time.Second))
		run.gates[a.Channel] = until
		if gerr := c.Store.CloseGate(ctx, a.Channel, until); gerr != nil {
			log.Error("record Slack's Retry-After", zap.Error(gerr))
		}
	}
	return c.failed(now, a, err, log)
}

// slackMessage is a Slack action's frozen message, or the outcome of an
// action that cannot be sent as decided.
func (c *Cycle) slackMessage(a model.Action, e model.Episode) (notify.Message, *model.Outcome) {
	if c.Slack == nil {
		return notify.Message{}, &model.Outcome{State: model.StateFailed, Error: "Slack is not configured any more"}
	}
	if a.Channel == "" {
		return notify.Message{}, &model.Outcome{State: model.StateFailed, Error: "no Slack route matches workspace " + e.WorkspaceID + " and slack.default_channel is empty"}
	}
	m, err := notify.DecodeMessage(a.Body)
	if err != nil {
		return m, &model.Outcome{State: model.StateFailed, Error: err.Error()}
	}
	return m, nil
}

// sendSlack posts a step or edits the first message for a resolve. It
// returns the outcome when it is decided, else the error for send's rules.
func (c *Cycle) sendSlack(ctx context.Context, a model.Action, parent model.Action, m notify.Message, log *zap.Logger) (*model.Outcome, error) {
	if a.Kind == model.ActionSlack {
		ts, err := c.Slack.Post(ctx, a.Channel, parent.ResultTS, a.Key, m)
		if err != nil {
			return nil, err
		}
		return &model.Outcome{State: model.StateDelivered, ResultChannel: a.Channel, ResultTS: ts}, nil
	}
	err := c.Slack.Update(ctx, parent.ResultChannel, parent.ResultTS, m)
	switch v := notify.Classify(err); {
	case err == nil:
		return &model.Outcome{State: model.StateDelivered, ResultChannel: parent.ResultChannel, ResultTS: parent.ResultTS}, nil
	case v.Gone:
		// Someone deleted the first message: there is nothing to mark
		// cleared, and no one to page about it.
		return &model.Outcome{State: model.StateSuperseded, Error: "the first message is no longer in Slack (deleted there); nothing to edit"}, nil
	case v.Frozen:
		ts, err := c.replyCleared(ctx, a, parent, m)
		if err != nil {
			return nil, err
		}
		log.Info("the first message may not be edited; said it cleared in its thread", zap.String("slack_error", v.Code), zap.String("slack_ts", ts))
		return &model.Outcome{State: model.StateDelivered, ResultChannel: parent.ResultChannel, ResultTS: ts}, nil
	}
	return nil, err
}

// replyCleared says in the episode's thread that it cleared, when its
// first message may not be edited: the workspace's edit window closed, or
// another Slack app posted it (the bot token was replaced by another
// app's). A reply an interrupted attempt may have left is looked for first,
// so that the thread never says it twice.
func (c *Cycle) replyCleared(ctx context.Context, a model.Action, parent model.Action, resolved notify.Message) (string, error) {
	if c.Finder != nil {
		ts, found, err := c.Finder.Find(ctx, parent.ResultChannel, parent.ResultTS, a.Key, a.CreatedAt)
		if err != nil || found {
			return ts, err
		}
	}
	return c.Slack.Post(ctx, parent.ResultChannel, parent.ResultTS, a.Key, notify.ClearedReply(resolved))
}

// released gives a claimed action back untried: it is due again at next,
// keeps whether an earlier attempt may have landed, and its attempt is
// refunded (it waits, as a held action does).
func released(a model.Action, next time.Time, why string) model.Outcome {
	return model.Outcome{State: model.StatePending, NextAttempt: next, Error: why, Uncertain: a.Uncertain, Refund: true}
}

// failed maps an error to a retry (with backoff, or Slack's Retry-After) or
// a permanent failure.
func (c *Cycle) failed(now time.Time, a model.Action, err error, log *zap.Logger) model.Outcome {
	v := notify.Classify(err)
	if !v.Retry {
		return model.Outcome{State: model.StateFailed, Error: term.OneLine(err)}
	}
	if v.NotSent { // the cycle's time ran out before the request: next cycle
		return released(a, now, term.OneLine(err))
	}
	wait := notify.Backoff(a.Attempts)
	if v.RateLimited && v.After > 0 {
		wait = v.After // Slack said exactly how long
	}
	return model.Outcome{State: model.StatePending, NextAttempt: now.Add(wait), Error: term.OneLine(err), Uncertain: v.Uncertain || a.Uncertain}
}

// fence re-checks in kandev, right before sending, that the episode still
// holds: the finding with its identity on a fresh read of its task, as it
// holds now (its kind may have changed: a question kandev hid or shows
// again), or nil when it no longer holds.
func (c *Cycle) fence(ctx context.Context, e model.Episode) (*scan.Finding, error) {
	fctx, cancel := context.WithTimeout(ctx, c.Config.Database.ScanTimeout)
	defer cancel()
	snap, err := c.Reader.TaskSnapshot(fctx, e.TaskID)
	if err != nil {
		return nil, err
	}
	return c.current(snap, e), nil
}

// holds says whether snap still shows episode e's finding.
func (c *Cycle) holds(snap *model.Snapshot, e model.Episode) bool { return c.current(snap, e) != nil }

// current is episode e's finding in snap, nil when snap does not show it.
func (c *Cycle) current(snap *model.Snapshot, e model.Episode) *scan.Finding {
	for _, f := range findings(snap, c.Config, c.Now()).Findings {
		if policy.Identity(f) == e.Identity {
			return &f
		}
	}
	return nil
}
