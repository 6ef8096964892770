// Package snooze is the outlet of the two clicks in Slack that act on
// watchdogd itself rather than on kandev: a snooze silences the episode's
// session and kind for an hour or four, and a resolve resolves the episode
// and silences its session and kind until the finding clears (otherwise
// the next cycle would open the episode again and page again). Both are
// writes to the ledger keyed by the click, so a click delivered again
// after a crash changes nothing more.
package snooze

import (
	"context"
	"fmt"
	"time"

	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/term"
)

// ResolveBound bounds a silence kept until its finding clears: a finding
// that never clears is announced again after it.
const ResolveBound = 30 * 24 * time.Hour

// Outlet delivers model.ActionSnooze and model.ActionResolve (register it
// unfenced: a person asked for quiet whatever kandev shows now).
type Outlet struct {
	// AddSilence stores a silence once per id.
	AddSilence func(ctx context.Context, s ledger.Silence) error
	// Resolve resolves an open episode, superseding its pending steps;
	// an episode resolved already is left as it is.
	Resolve func(ctx context.Context, episodeID string, why model.Reason, at time.Time) error
}

// Render keeps the body the click was decided with.
func (o *Outlet) Render(r notify.Rendering) (string, error) { return r.Action.Body, nil }

// Preview says what the click would do, escaped for a terminal.
func (o *Outlet) Preview(a model.Action, e model.Episode, _ string) (string, error) {
	b, err := model.DecodeClick(a.Body)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("→ %s session %s (%s) for %s", a.Kind, term.Escape(e.SessionID), e.Kind, term.Escape(b.User)), nil
}

// Send stores the silence (and resolves the episode for a resolve).
func (o *Outlet) Send(ctx context.Context, at notify.Attempt) notify.Sent {
	a, e := at.Action, at.Episode
	b, err := model.DecodeClick(a.Body)
	if err != nil {
		return notify.Failed("decode the click: " + err.Error())
	}
	v := Silence(a, e, b)
	if err := o.AddSilence(ctx, v); err != nil {
		return notify.Error(err, notify.Verdict{Retry: true, Code: "ledger"})
	}
	if a.Kind == model.ActionResolve {
		if err := o.Resolve(ctx, e.ID, model.Reason{Code: model.ClearedFromSlack, Who: b.User}, at.Now); err != nil {
			return notify.Error(err, notify.Verdict{Retry: true, Code: "ledger"})
		}
	}
	return notify.Delivered("", "")
}

// Silence is the silence a snooze or resolve click a stores: on the
// episode's session and kind, and on the episode itself whatever kind it
// turns to (a question snoozed while unanswered stays snoozed once it is
// shadowed), named by the click's key (stored once), made by the Slack
// user who clicked.
func Silence(a model.Action, e model.Episode, b model.ClickBody) ledger.Silence {
	v := ledger.Silence{ID: "slack-" + a.Key[:min(len(a.Key), 16)], Matchers: model.Matchers{model.Equal("session_id", e.SessionID), model.Equal("kind", string(e.Kind))},
		Identity: e.Identity, CreatedBy: "slack:" + b.User,
		CreatedAt: a.CreatedAt, Until: b.Until, Comment: "snoozed from Slack for " + b.What}
	if a.Kind == model.ActionResolve {
		v.Until, v.UntilClear, v.Comment = a.CreatedAt.Add(ResolveBound), true, "resolved from Slack: quiet until the finding clears"
	}
	return v
}
