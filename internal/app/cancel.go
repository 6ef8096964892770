package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
)

// errNudgeNotOwed: the session runs another turn than the one the action
// was for (a human prompted it, or a queued message started it after the
// cancel), so the agent has work and neither a cancel nor a nudge is owed.
var errNudgeNotOwed = errors.New("the session is running a new turn; no cancel or nudge is owed")

// errSessionEnded: the session ended (or its task was archived) before
// the nudge; there is no one left to nudge, and no one to page about it.
var errSessionEnded = errors.New("the session ended before the nudge; nothing is owed")

// errTurnRunsOn: an earlier attempt may have cancelled the turn, which runs
// on with output. Its nudge stays owed until the turn ends.
var errTurnRunsOn = errors.New("the turn an earlier cancel was for runs on with output; the nudge waits for it to end")

// cancelAndNudge cancels the episode's turn, waits (bounded) until the
// session is promptable, then sends the nudge. cancelled says whether
// agent.cancel was sent in this attempt. When kandev refuses the nudge, the
// session is read once more, and the nudge is not sent again: a session
// that started running in the meantime is handled as any RUNNING one
// (a RUNNING refusal is a permanent failure unless the step is
// cancel_and_nudge), one that ended supersedes the action, and otherwise
// the refusal stands.
//
// The turn is cancelled only while the session runs that very turn (any
// turn, for an episode about none). When an earlier attempt may have
// cancelled it (a.Uncertain), it is cancelled again only if the finding
// still holds on it: the earlier cancel did not take, or a holder that
// crashed never sent it. A turn that runs on with output is left alone
// (the nudge waits for it to end), and a new turn means the nudge is not
// owed. A session no longer running gets the nudge, which kandev
// deduplicates by client_message_id.
func (c *Cycle) cancelAndNudge(ctx context.Context, a model.Action, e model.Episode) (cancelled bool, err error) {
	deadline := time.Now().Add(30 * time.Second)
	var refusal error
	for {
		snap, err := c.Reader.TaskSnapshot(ctx, e.TaskID)
		if err != nil {
			return cancelled, err
		}
		s := sessionIn(snap, e.SessionID)
		switch {
		case s == nil:
			return cancelled, errSessionEnded
		case s.State != "RUNNING" && refusal != nil: // refused, and not for running
			return cancelled, refusal
		case s.State != "RUNNING":
			err := c.Kandev.AddMessage(ctx, e.TaskID, e.SessionID, decodeText(a.Body), kandev.ClientMessageID(a.Key))
			if !kandev.Refusal(err) {
				return cancelled, err
			}
			refusal = err
			continue
		case e.TurnID != "" && (s.Current == nil || s.Current.ID != e.TurnID):
			return cancelled, errNudgeNotOwed
		case !cancelled && (!a.Uncertain || c.holds(snap, e)):
			if err := c.Kandev.Cancel(ctx, e.SessionID); err != nil {
				return notify.Classify(err).Uncertain, cancelError(e.SessionID, err) // a lost answer may hide a cancel that landed
			}
			cancelled = true
			continue
		case !cancelled:
			return false, errTurnRunsOn
		case time.Now().After(deadline):
			return cancelled, errors.New("session still RUNNING 30s after agent.cancel")
		}
		select {
		case <-ctx.Done():
			return cancelled, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// cancelError names what an operator must do when kandev cannot cancel
// the turn because no agent process runs for the session: kandev leaves
// it RUNNING, and refuses the nudge while it is, so only a human can
// resume or stop it.
func cancelError(session string, err error) error {
	var re *kandev.RequestError
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
