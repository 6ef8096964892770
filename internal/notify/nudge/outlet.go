// Package nudge delivers watchdogd's nudges through kandev's WebSocket API:
// a message to the agent (message.add, with the action's key as its
// client_message_id, which kandev deduplicates), after cancelling a turn
// that runs for a cancel_and_nudge.
package nudge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/notify/kandevapi"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
)

// Kandev is what a nudge sends through.
type Kandev interface {
	AddMessage(ctx context.Context, taskID, sessionID, content, clientMessageID string) error
	Cancel(ctx context.Context, sessionID string) error
}

// Outlet delivers nudges. Register it for model.ActionNudge (fenced) and
// model.ActionCancelAndNudge (not fenced by the protocol: once its cancel
// may have gone out, the nudge is owed though the cancel cleared the
// finding, so it fences itself).
type Outlet struct {
	Kandev Kandev
	// Read re-reads one task's sessions; Current is an episode's finding
	// in such a read, nil when it no longer holds.
	Read    func(ctx context.Context, taskID string) (*model.Snapshot, error)
	Current func(snap *model.Snapshot, e model.Episode) *scan.Finding
	// Settle is how long a cancel waits for the session to leave RUNNING;
	// zero is config.CancelSettle.
	Settle time.Duration
}

// Render freezes what the nudge says: the kind's policy text.
func (o *Outlet) Render(r notify.Rendering) (string, error) { return notify.EncodeText(r.Text), nil }

// Preview says what a nudge would do in kandev — the cancel of a
// cancel_and_nudge, then the message — escaped for a terminal.
func (o *Outlet) Preview(a model.Action, e model.Episode, _ string) (string, error) {
	var b strings.Builder
	if a.Kind == model.ActionCancelAndNudge {
		fmt.Fprintf(&b, "→ kandev agent.cancel of session %s\n", term.Escape(e.SessionID))
	}
	fmt.Fprintf(&b, "→ kandev message.add to session %s (task %s):\n%s", term.Escape(e.SessionID), term.Escape(e.TaskID),
		term.Indent(term.EscapeLines(notify.DecodeText(a.Body))))
	return b.String(), nil
}

// Send nudges the agent, never while a person owes the answer to its
// question: a nudge there makes kandev stop the agent and resume it with
// the nudge, and the question leaves kandev's UI and API.
func (o *Outlet) Send(ctx context.Context, at notify.Attempt) notify.Sent {
	a, e := at.Action, at.Episode
	if a.Kind == model.ActionCancelAndNudge {
		return o.cancelAndNudge(ctx, at)
	}
	if at.Current != nil && model.HumanOwesAnswer(at.Current.Kind) {
		return notify.Superseded(humanOwes)
	}
	if a.Kind == model.ActionSendMessage {
		if b, err := model.DecodeClick(a.Body); err == nil {
			if why := policy.NoLongerOffered(at.Current, b); why != "" {
				return notify.Superseded(why)
			}
		}
	}
	if err := o.Kandev.AddMessage(ctx, e.TaskID, e.SessionID, notify.DecodeText(a.Body), kandevapi.ClientMessageID(a.Key)); err != nil {
		return notify.Error(err, kandevapi.Classify(err))
	}
	return notify.Delivered("", "")
}

// humanOwes is why a nudge decided for a question kandev hid is not sent
// once kandev shows the question again.
const humanOwes = "a person owes an answer to the question now: a nudge would destroy it in kandev"

// The ways a cancel_and_nudge ends without sending its nudge.
var (
	// errNudgeNotOwed: the session runs another turn than the one the
	// action was for (a human prompted it, or a queued message started it
	// after the cancel), so the agent has work and neither a cancel nor a
	// nudge is owed.
	errNudgeNotOwed = errors.New("the session is running a new turn; no cancel or nudge is owed")
	// errSessionEnded: the session ended (or its task was archived) before
	// the nudge; there is no one left to nudge, and no one to page about it.
	errSessionEnded = errors.New("the session ended before the nudge; nothing is owed")
	// errTurnRunsOn: an earlier attempt may have cancelled the turn, which
	// runs on with output. Its nudge stays owed until the turn ends.
	errTurnRunsOn = errors.New("the turn an earlier cancel was for runs on with output; the nudge waits for it to end")
)

// cancelAndNudge fences the action as the protocol fences others, unless
// its cancel may have gone out already, then runs the cancel and the nudge.
func (o *Outlet) cancelAndNudge(ctx context.Context, at notify.Attempt) notify.Sent {
	a, e := at.Action, at.Episode
	var fenced *model.Snapshot
	if !a.Uncertain {
		if !e.ResolvedAt.IsZero() {
			return notify.Superseded("the episode resolved before delivery")
		}
		snap, err := o.Read(ctx, e.TaskID)
		if err != nil {
			return notify.Error(fmt.Errorf("fence: %w", err), notify.Verdict{Retry: true, Code: "fence"})
		}
		switch f := o.Current(snap, e); {
		case f == nil:
			return notify.Superseded("the finding no longer holds (turn moved on or question answered)")
		case model.HumanOwesAnswer(f.Kind):
			return notify.Superseded(humanOwes)
		}
		fenced = snap
	}
	cancelled, err := o.cancelThenNudge(ctx, a, e, fenced)
	switch {
	case err == nil:
		return notify.Delivered("", "")
	case errors.Is(err, errNudgeNotOwed), errors.Is(err, errSessionEnded):
		return notify.Superseded(err.Error())
	case errors.Is(err, errTurnRunsOn): // a wait, not a failure: nothing was tried
		return notify.Wait(a, at.Now.Add(time.Minute), err.Error()) // a.Uncertain: the nudge stays owed
	}
	// Once the cancel is sent the nudge is owed whatever follows: an
	// uncertain action survives its episode's resolve and is not fenced on
	// the finding the cancel cleared.
	s := notify.Error(err, kandevapi.Classify(err))
	s.MayHaveLanded = cancelled
	return s
}

// cancelThenNudge cancels the episode's turn, waits (bounded) until the
// session is promptable, then sends the nudge. cancelled says whether
// agent.cancel was sent in this attempt. snap, when set, is the fence's
// read, taken as the first. When kandev refuses the nudge, the session is
// read once more, and the nudge is not sent again: a session that started
// running in the meantime is handled as any RUNNING one (a RUNNING refusal
// is a permanent failure unless the step is cancel_and_nudge), one that
// ended supersedes the action, and otherwise the refusal stands.
//
// The turn is cancelled only while the session runs that very turn (any
// turn, for an episode about none). When an earlier attempt may have
// cancelled it (a.Uncertain), it is cancelled again only if the finding
// still holds on it: the earlier cancel did not take, or a holder that
// crashed never sent it. A turn that runs on with output is left alone
// (the nudge waits for it to end), and a new turn means the nudge is not
// owed. A session no longer running gets the nudge, which kandev
// deduplicates by client_message_id.
//
// An attempt takes at most one read, agent.cancel, config.CancelSettle
// (the reads after the cancel end with it) and message.add: check-config
// holds state.claim_ttl above that, so that no claim cuts it between the
// cancel and the nudge. A refused nudge before any cancel, the session
// running again, ends the attempt (the nudge waits) rather than start a
// cancel past that bound.
func (o *Outlet) cancelThenNudge(ctx context.Context, a model.Action, e model.Episode, snap *model.Snapshot) (cancelled bool, err error) {
	var settleBy time.Time // once the cancel is sent
	var refusal error
	for {
		if snap == nil {
			if snap, err = o.readBy(ctx, e.TaskID, settleBy); err != nil {
				if !settleBy.IsZero() && ctx.Err() == nil && !time.Now().Before(settleBy) {
					return cancelled, cmp.Or(refusal, o.stillRunning())
				}
				return cancelled, err
			}
		}
		s := sessionIn(snap, e.SessionID)
		cur := snap
		snap = nil
		switch {
		case s == nil:
			return cancelled, errSessionEnded
		case s.State != "RUNNING" && refusal != nil: // refused, and not for running
			return cancelled, refusal
		case s.State != "RUNNING":
			err := o.Kandev.AddMessage(ctx, e.TaskID, e.SessionID, notify.DecodeText(a.Body), kandevapi.ClientMessageID(a.Key))
			if !kandevapi.Refusal(err) {
				return cancelled, err
			}
			refusal = err
			continue
		case e.TurnID != "" && (s.Current == nil || s.Current.ID != e.TurnID):
			return cancelled, errNudgeNotOwed
		case !cancelled && refusal != nil:
			return false, errTurnRunsOn
		case !cancelled && (!a.Uncertain || o.Current(cur, e) != nil):
			if err := o.Kandev.Cancel(ctx, e.SessionID); err != nil {
				return kandevapi.Classify(err).Uncertain, cancelError(e.SessionID, err) // a lost answer may hide a cancel that landed
			}
			cancelled, settleBy = true, time.Now().Add(o.settle())
			continue
		case !cancelled:
			return false, errTurnRunsOn
		case !time.Now().Before(settleBy):
			return cancelled, cmp.Or(refusal, o.stillRunning())
		}
		select {
		case <-ctx.Done():
			return cancelled, ctx.Err()
		case <-time.After(min(time.Second, time.Until(settleBy))):
		}
	}
}

func (o *Outlet) settle() time.Duration { return cmp.Or(o.Settle, config.CancelSettle) }

// stillRunning: the cancel was taken, but kandev still shows the session
// RUNNING when its settle wait ends.
func (o *Outlet) stillRunning() error {
	return fmt.Errorf("session still RUNNING %s after agent.cancel", o.settle())
}

// readBy reads a task's sessions, cut at by when set: the reads after a
// cancel end with its settle wait.
func (o *Outlet) readBy(ctx context.Context, taskID string, by time.Time) (*model.Snapshot, error) {
	if !by.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, by)
		defer cancel()
	}
	return o.Read(ctx, taskID)
}

// cancelError names what an operator must do when kandev cannot cancel
// the turn because no agent process runs for the session: kandev leaves
// it RUNNING, and refuses the nudge while it is, so only a human can
// resume or stop it.
func cancelError(session string, err error) error {
	var re *kandevapi.RequestError
	if errors.As(err, &re) && re.NoAgent() {
		return fmt.Errorf("kandev has no agent process for session %s, so its turn cannot be cancelled nor the agent nudged; resume or stop the session in kandev: %w", session, err)
	}
	return err
}

// sessionIn is the session with id in snap, nil when it is not active.
func sessionIn(snap *model.Snapshot, id string) *model.Session {
	for i := range snap.Sessions {
		if snap.Sessions[i].ID == id {
			return &snap.Sessions[i]
		}
	}
	return nil
}
