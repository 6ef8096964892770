package cycle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// ClickIn is a click in Slack as received: the episode its button names,
// who clicked, and how to read what it asks from the episode (the message
// clicked, as watchdogd posted it) and its finding (the button's option
// becomes kandev's ids; a form's state its answers), or why it does not
// fit them.
type ClickIn struct {
	Episode string
	User    string
	Read    func(e model.Episode, f scan.Finding) (c model.Click, unfit string)
}

// Clicked is what a click became: the keys of the actions saved for it
// (the click and its story, to deliver now), or why nothing was done.
type Clicked struct {
	Keys    []string
	Refused string
}

// noSuchAlert is why a click on an episode the ledger does not hold does
// nothing.
const noSuchAlert = "watchdogd knows no such alert (pruned from its ledger, or not its button)"

// Click decides a click and saves what it becomes in the ledger,
// before anything is sent: who may act is checked (members lists a user
// group's members, through Slack), then policy.Click makes it an action
// keyed by (episode, button, value, user), so that the same click
// received twice is saved once. The decision reads the episode inside the
// ledger's serialised transaction, so that of two clicks in the same
// instant only the first acts on kandev. Deliver it with DeliverClicks.
func (c *Cycle) Click(ctx context.Context, in ClickIn, members func(context.Context, string) ([]string, error)) (Clicked, error) {
	// Slack is asked who is in a group before the transaction, not in it.
	e, refused, err := c.actor(ctx, in.Episode, in.User, members)
	if err != nil || refused != "" {
		return Clicked{Refused: refused}, err
	}
	var out Clicked
	var d policy.Decided
	_, err = c.Store.DecideOn(ctx, e.ID, func(e model.Episode) (model.Plan, error) {
		d, out = c.decideClick(e, in)
		if out.Refused != "" {
			return model.Plan{}, nil
		}
		body, err := c.Outlets.Render(notify.Rendering{Action: d.Tell, Episode: e, Finding: policy.StoredFinding(e), Now: d.Tell.CreatedAt})
		if err != nil {
			return model.Plan{}, fmt.Errorf("render the click's story: %w", err)
		}
		d.Tell.Body = body
		return model.Plan{Now: d.Click.CreatedAt, Actions: []model.Action{d.Click, d.Tell}}, nil
	})
	switch {
	case errors.Is(err, sql.ErrNoRows): // pruned since the read above
		return Clicked{Refused: noSuchAlert}, nil
	case err != nil || out.Refused != "":
		return out, err
	}
	c.Log.Info("click in Slack saved", zap.String("episode", e.ID), zap.String("action", string(d.Click.Kind)),
		zap.String("key", d.Click.Key), zap.String("slack_user", in.User))
	return Clicked{Keys: []string{d.Click.Key, d.Tell.Key}}, nil
}

// FormFor is the finding an "Answer…" click opens its form on, once who
// clicked may act on the episode; or why not (refused), as a click on it
// would be told: the form shows the question to whoever sees it.
func (c *Cycle) FormFor(ctx context.Context, episode, user string, members func(context.Context, string) ([]string, error)) (f scan.Finding, refused string, err error) {
	e, refused, err := c.actor(ctx, episode, user, members)
	if err != nil || refused != "" {
		return scan.Finding{}, refused, err
	}
	return policy.StoredFinding(e), "", nil
}

// actor reads the episode a click names and checks that user may act on
// it, or says why not; err is the ledger's.
func (c *Cycle) actor(ctx context.Context, episode, user string, members func(context.Context, string) ([]string, error)) (model.Episode, string, error) {
	e, err := c.Store.Episode(ctx, episode)
	if errors.Is(err, sql.ErrNoRows) {
		return model.Episode{}, noSuchAlert, nil
	}
	if err != nil {
		return model.Episode{}, "", err
	}
	if r := c.Config.Routing(); r == nil || !c.mayAct(ctx, policy.Actors(*r, e), user, members) {
		return model.Episode{}, "you are not allowed to act on this alert (slack.interactivity's allowed_users and allowed_usergroups)", nil
	}
	return e, "", nil
}

// decideClick is what the click in asks of e as it stands now, or why it
// is refused. A click that does not fit the finding (an older message, a
// forged value) is refused: the person is told, nothing is saved.
func (c *Cycle) decideClick(e model.Episode, in ClickIn) (policy.Decided, Clicked) {
	f := policy.StoredFinding(e)
	k, unfit := in.Read(e, f)
	if unfit != "" {
		return policy.Decided{}, Clicked{Refused: unfit}
	}
	k.EpisodeID, k.User = e.ID, in.User
	text := ""
	if pol := c.Config.Policy[e.Kind]; pol != nil {
		text = pol.Text
	}
	d := policy.Click(e, k, policy.ClickIn{Now: c.Now(), Finding: f, Text: text, First: firstPost(e)})
	return d, Clicked{Refused: d.Refused}
}

// mayAct asks Slack for the members of the listed groups only when the
// user is not listed by id.
func (c *Cycle) mayAct(ctx context.Context, a model.Actors, user string, members func(context.Context, string) ([]string, error)) bool {
	if policy.MayAct(a, user, nil) {
		return true
	}
	got := map[string][]string{}
	for _, g := range a.Usergroups {
		m, err := members(ctx, g)
		if err != nil {
			c.Log.Warn("cannot list a user group's members; it admits nobody for this click", zap.String("usergroup", g), zap.Error(err))
			continue
		}
		got[g] = m
	}
	return policy.MayAct(a, user, got)
}

// firstPost is the episode's delivered first Slack message, nil when none.
func firstPost(e model.Episode) *model.Action {
	for i, a := range e.Actions {
		if a.Kind == model.ActionSlack && a.ParentKey == "" && a.State == model.StateDelivered && a.ResultTS != "" {
			return &e.Actions[i]
		}
	}
	return nil
}

// DeliverClicks runs the delivery protocol now for a click's actions, in
// order (the click, then its story). An action not due here
// (another replica holds it, this one does not lead, a retry waits) goes
// out at a later cycle, as any other.
func (c *Cycle) DeliverClicks(ctx context.Context, keys []string) {
	silences, err := c.silences(ctx, c.Now())
	if err != nil {
		c.Log.Warn("read silences for a click; its delivery waits for the next cycle", zap.Error(err))
		return
	}
	d := c.deliverer()
	for _, k := range keys {
		if _, err := d.DeliverOne(ctx, k, silences); err != nil {
			c.Log.Warn("deliver a click now; the next cycle will", zap.String("key", k), zap.Error(err))
		}
	}
}

// endCleared ends the silences a resolve from Slack keeps until its
// finding clears, once no scan reports it, and returns those that hold.
func (c *Cycle) endCleared(ctx context.Context, rep scan.Report) []policy.ClearSilence {
	now := c.Now()
	held, ended := c.clearSilences(ctx, rep)
	for _, id := range ended {
		if _, err := c.Store.ExpireSilence(ctx, id, now); err != nil {
			c.Log.Warn("end a silence whose finding cleared", zap.String("silence", id), zap.Error(err))
			continue
		}
		c.Log.Info("a silence kept until its finding cleared ended", zap.String("silence", id))
	}
	return held
}

// clearSilences reads the silences kept until their finding clears: those
// that hold, and those whose finding rep no longer reports (ended).
func (c *Cycle) clearSilences(ctx context.Context, rep scan.Report) (held []policy.ClearSilence, ended []string) {
	all, err := c.Store.Silences(ctx, c.Now(), false)
	if err != nil {
		c.Log.Warn("read silences to end those whose finding cleared", zap.Error(err))
		return nil, nil
	}
	for _, s := range all {
		if s.UntilClear { // a resolve from Slack: session_id="…" kind="…"
			session, _ := s.Matchers.EqualValue("session_id")
			kind, _ := s.Matchers.EqualValue("kind")
			held = append(held, policy.ClearSilence{ID: s.ID, SessionID: session, Kind: model.Kind(kind), Identity: s.Identity})
		}
	}
	ended = policy.Cleared(held, rep.Findings)
	return slices.DeleteFunc(held, func(s policy.ClearSilence) bool { return slices.Contains(ended, s.ID) }), ended
}
