package slack

import (
	"context"
	"strings"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
)

// Outlet delivers Slack actions: a step's post (at the top of the channel
// or, for a later step, in the episode's thread) and a resolve's edit of
// the first message. Register it for model.ActionSlack (paced and fenced)
// and model.ActionSlackUpdate (paced; an edit is not fenced: it says the
// finding cleared).
type Outlet struct {
	Client *Client
	// Budget is how many actions a channel takes per cycle
	// (slack.max_messages_per_cycle), read as each cycle delivers.
	Budget func() int
	// RateLimited, when set, hears of each 429 and each action the budget
	// holds back, with which (watchdogd_slack_rate_limited_total's reason).
	RateLimited func(reason string)
	// Interactive puts buttons on first posts (slack.interactivity).
	Interactive bool
}

// Render freezes the Slack message an action sends: a step's post or
// reply, a reply saying the question's visibility changed, or a resolve's
// edit — the first message's frozen text under a cleared line.
func (o *Outlet) Render(r notify.Rendering) (string, error) {
	a := r.Action
	switch a.Kind {
	case model.ActionSlackTell:
		return renderTell(r)
	case model.ActionSlack:
		return Render(r.Finding, RenderOptions{Mention: a.Mention, Reply: a.ParentKey != "",
			KindChange: strings.HasPrefix(a.Seq, "kind/"), Buttons: o.Interactive, Episode: r.Episode.ID, Now: r.Now}).Encode(), nil
	}
	orig := Render(r.Finding, RenderOptions{Now: r.Now})
	for _, pa := range r.Episode.Actions {
		if pa.Key == a.ParentKey {
			if m, err := DecodeMessage(pa.Body); err == nil {
				orig = m
			}
		}
	}
	return RenderResolved(orig, r.Reason, r.Now.Sub(r.Episode.Since)).Encode(), nil
}

// Find looks for a post an earlier attempt may have left: a message in the
// channel (or the thread) carrying the action's key.
func (o *Outlet) Find(ctx context.Context, at notify.Attempt) (notify.Sent, bool) {
	a := at.Action
	if a.Kind == model.ActionSlackTell {
		return o.findTold(ctx, at)
	}
	if a.Kind != model.ActionSlack {
		return notify.Sent{}, false // an edit is the same edit again
	}
	ts, found, err := o.Client.Find(ctx, a.Channel, threadOf(at.Parent), a.Key, a.CreatedAt)
	switch {
	case err != nil:
		return failed(err), true
	case found:
		return notify.Delivered(a.Channel, ts), true
	}
	return notify.Sent{}, false
}

// Send posts a step or edits the first message for a resolve.
func (o *Outlet) Send(ctx context.Context, at notify.Attempt) notify.Sent {
	a, e, p := at.Action, at.Episode, at.Parent
	if a.Kind == model.ActionSlackTell {
		return o.tell(ctx, at)
	}
	if a.Kind == model.ActionSlackUpdate && p == nil {
		return notify.Superseded("the first message was never sent")
	}
	if a.Channel == "" {
		return notify.Failed("no Slack route matches workspace " + e.WorkspaceID + " and slack.default_channel is empty")
	}
	m, err := DecodeMessage(a.Body)
	if err != nil {
		return notify.Failed(err.Error())
	}
	if a.Kind == model.ActionSlack {
		if at.Now.Sub(a.CreatedAt) >= LateAfter {
			m = SentLate(m, a.CreatedAt)
		}
		ts, err := o.Client.Post(ctx, a.Channel, threadOf(p), a.Key, m)
		if err != nil {
			return failed(err)
		}
		return notify.Delivered(a.Channel, ts)
	}
	err = o.Client.Update(ctx, p.ResultChannel, p.ResultTS, m)
	switch v := Classify(err); {
	case err == nil:
		return notify.Delivered(p.ResultChannel, p.ResultTS)
	case v.Gone:
		// Someone deleted the first message: there is nothing to mark
		// cleared, and no one to page about it.
		return notify.Superseded("the first message is no longer in Slack (deleted there); nothing to edit")
	case v.Frozen:
		ts, err := o.replyCleared(ctx, a, *p, m)
		if err != nil {
			return failed(err)
		}
		at.Logger().Info("the first message may not be edited; said it cleared in its thread",
			zap.String("slack_error", v.Code), zap.String("slack_ts", ts))
		return notify.Delivered(p.ResultChannel, ts)
	}
	return failed(err)
}

// replyCleared says in the episode's thread that it cleared, when its
// first message may not be edited: the workspace's edit window closed, or
// another Slack app posted it (the bot token was replaced by another
// app's). A reply an interrupted attempt may have left is looked for first,
// so that the thread never says it twice.
func (o *Outlet) replyCleared(ctx context.Context, a model.Action, parent model.Action, resolved Message) (string, error) {
	ts, found, err := o.Client.Find(ctx, parent.ResultChannel, parent.ResultTS, a.Key, a.CreatedAt)
	if err != nil || found {
		return ts, err
	}
	return o.Client.Post(ctx, parent.ResultChannel, parent.ResultTS, a.Key, ClearedReply(resolved))
}

// threadOf is the thread a reply goes to: the first message's, none for a
// first post.
func threadOf(parent *model.Action) string {
	if parent == nil {
		return ""
	}
	return parent.ResultTS
}

// failed reports a Slack error with its verdict.
func failed(err error) notify.Sent { return notify.Error(err, Classify(err).Deliver()) }

// Unconfigured stands for Slack when the config has no slack: block: an
// action decided for Slack before the block was removed renders as it
// would, and fails when sent, saying why (a resolve edit of a message that
// never went out is superseded: there is nothing to edit).
type Unconfigured struct{}

// Render renders as Outlet does.
func (Unconfigured) Render(r notify.Rendering) (string, error) { return (&Outlet{}).Render(r) }

// Preview previews as Outlet does.
func (Unconfigured) Preview(a model.Action, e model.Episode, parent string) (string, error) {
	return (&Outlet{}).Preview(a, e, parent)
}

// Send fails: there is no Slack to send to.
func (Unconfigured) Send(_ context.Context, at notify.Attempt) notify.Sent {
	if at.Action.Kind == model.ActionSlackUpdate && at.Parent == nil {
		return notify.Superseded("the first message was never sent")
	}
	return notify.Failed("Slack is not configured any more")
}
