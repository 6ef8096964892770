// Package answer is the outlet that answers kandev for a person who
// clicked in Slack: a question bundle through kandev's HTTP respond (the
// first answer wins), a permission through permission.respond on its
// WebSocket. Neither carries an idempotency key, so an attempt that may
// have landed is settled from what kandev recorded: the answer in the
// bundle's rows, the permission's row no longer pending.
package answer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/notify/kandevapi"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
)

// Kandev is what an answer is sent through (a *kandevapi.Client): a
// bundle over HTTP, a permission over the WebSocket.
type Kandev interface {
	Respond(ctx context.Context, pendingID string, answers []model.Answer) (kandevapi.Responded, error)
	RespondPermission(ctx context.Context, taskID, sessionID, requestID, pendingID, optionID string) error
}

// Outlet delivers model.ActionAnswer and model.ActionPermission. It fences
// itself (register it unfenced): the read that fences an attempt also says
// who answered first, which the protocol's fence cannot.
type Outlet struct {
	Kandev Kandev
	// Read re-reads one task's sessions; Current is an episode's finding
	// in such a read, nil when it no longer holds.
	Read    func(ctx context.Context, taskID string) (*model.Snapshot, error)
	Current func(snap *model.Snapshot, e model.Episode) *scan.Finding
}

// PermissionSettle is how long a permission answer that may have landed
// waits for kandev to record it before it is given up: permission.respond
// carries no idempotency key, so it is never sent again while the request
// is pending in kandev.
const PermissionSettle = 2 * time.Minute

// Render keeps the body the click was decided with.
func (o *Outlet) Render(r notify.Rendering) (string, error) { return r.Action.Body, nil }

// Preview says what an answer would send, escaped for a terminal.
func (o *Outlet) Preview(a model.Action, e model.Episode, _ string) (string, error) {
	b, err := model.DecodeClick(a.Body)
	if err != nil {
		return "", err
	}
	if a.Kind == model.ActionPermission {
		return fmt.Sprintf("→ kandev permission.respond to %s in session %s: %s (for %s)", term.Escape(b.PendingID), term.Escape(e.SessionID),
			term.Escape(b.What), term.Escape(b.User)), nil
	}
	return fmt.Sprintf("→ kandev respond to question %s: %s (for %s)", term.Escape(b.PendingID), term.Escape(b.What), term.Escape(b.User)), nil
}

// Find settles an answer that may have landed from what kandev recorded:
// ours, someone else's; or not found, when the read cannot tell.
func (o *Outlet) Find(ctx context.Context, at notify.Attempt) (notify.Sent, bool) {
	b, err := model.DecodeClick(at.Action.Body)
	if err != nil || at.Action.Kind != model.ActionAnswer {
		return notify.Sent{}, false // a permission is judged where it is sent
	}
	snap, err := o.Read(ctx, at.Episode.TaskID)
	if err != nil {
		return notify.Error(fmt.Errorf("read kandev for an earlier answer: %w", err), notify.Verdict{Retry: true, Uncertain: true, Code: "fence"}), true
	}
	bundle := BundleIn(snap, at.Episode.SessionID, b.PendingID)
	switch Judge(bundle, b.Answers) {
	case Ours:
		return notify.Delivered("", ""), true
	case Theirs:
		return theirs(bundle), true
	}
	return notify.Sent{}, false
}

// Send answers kandev once the read right before it shows the question
// or permission still waiting on the current turn. A click that could not
// reach kandev for ClickPatience, nothing having gone out, fails: the
// person who clicked is told, rather than left waiting on retries.
func (o *Outlet) Send(ctx context.Context, at notify.Attempt) notify.Sent {
	return Patient(at, o.send(ctx, at))
}

// ClickPatience is how long a click keeps trying a kandev that cannot be
// reached (down, or failing) before it gives up, saying so.
const ClickPatience = 2 * time.Minute

// Patient turns s, a retryable failure of an attempt at a click, into a
// failure for good once ClickPatience has passed since the click — unless
// this or an earlier attempt may have reached kandev: that one is settled
// from what kandev records, however long it takes. What it says goes to
// Slack, so it names the kind of failure only (the log has each attempt's
// error, with kandev's address in it).
func Patient(at notify.Attempt, s notify.Sent) notify.Sent {
	if s.Outcome != nil || s.Err == nil || !s.Verdict.Retry || s.Verdict.Uncertain || s.MayHaveLanded || at.MayHaveLanded ||
		at.Now.Sub(at.Action.CreatedAt) < ClickPatience {
		return s
	}
	return notify.Failed(fmt.Sprintf("kandev could not be reached for %s (%s), so nothing was done: answer in kandev, or click again",
		term.Minutes(at.Now.Sub(at.Action.CreatedAt)), unreached(s.Verdict.Code)))
}

// unreached says in plain words, for a person in Slack, why kandev was
// not reached, by the verdict's code.
func unreached(code string) string {
	switch code {
	case "refused", "connect":
		return "kandev refused the connection"
	case "fence":
		return "kandev's database could not be read"
	case "not_sent":
		return "watchdogd had no time left to send it"
	}
	return "kandev did not answer"
}

func (o *Outlet) send(ctx context.Context, at notify.Attempt) notify.Sent {
	b, err := model.DecodeClick(at.Action.Body)
	if err != nil {
		return notify.Failed("decode the click: " + err.Error())
	}
	snap, err := o.Read(ctx, at.Episode.TaskID)
	if err != nil {
		return notify.Error(fmt.Errorf("fence: %w", err), notify.Verdict{Retry: true, Code: "fence"})
	}
	if at.Action.Kind == model.ActionPermission {
		return o.permission(ctx, at, b, snap)
	}
	bundle := BundleIn(snap, at.Episode.SessionID, b.PendingID)
	switch Judge(bundle, b.Answers) {
	case Ours:
		return notify.Delivered("", "")
	case Theirs:
		return theirs(bundle)
	case Unknown:
		if !at.MayHaveLanded {
			return notify.Superseded("the question is no longer waiting in kandev (answered there, or its turn moved on)")
		} // ours may be what moved it on: ask kandev, which takes the first answer only
	case Waiting:
		f := o.Current(snap, at.Episode)
		if f != nil && f.Kind == model.KindShadowedClarification {
			return notify.Superseded("kandev hides the question now and would refuse its answer; send the answer as a message instead")
		}
		if why := policy.NoLongerOffered(f, b); why != "" {
			return notify.Superseded(why)
		}
	}
	r, err := o.Kandev.Respond(ctx, b.PendingID, b.Answers)
	s, look := AfterRespond(r, err, b.Answers)
	if !look {
		return s
	}
	// kandev refused without saying whose answer it holds: its rows say.
	if snap, err = o.Read(ctx, at.Episode.TaskID); err == nil {
		bundle = BundleIn(snap, at.Episode.SessionID, b.PendingID)
		switch Judge(bundle, b.Answers) {
		case Ours:
			return notify.Delivered("", "")
		case Theirs:
			return theirs(bundle)
		}
	}
	return s
}

// AfterRespond says how an answer settles from kandev's reply: taken, or
// kandev holding this very answer (an earlier attempt's), is delivered;
// kandev holding another is someone else's, first; a refusal that says
// no more is looked into (look: read kandev's rows), and stands as s
// when they do not tell.
func AfterRespond(r kandevapi.Responded, err error, ours []model.Answer) (s notify.Sent, look bool) {
	var re *kandevapi.RespondError
	switch {
	case err == nil && r.Claimed:
		return notify.Delivered("", ""), false
	case err == nil && len(r.Recorded) > 0 && Same(r.Recorded, ours):
		return notify.Delivered("", ""), false
	case err == nil && len(r.Recorded) > 0:
		return notify.Failed("someone answered in kandev first: " + Words(r.Recorded, nil)), false
	case err == nil:
		return notify.Failed("kandev took another answer first"), true
	case errors.As(err, &re) && re.Status == 409:
		return notify.Failed("kandev no longer takes an answer to this question (answered elsewhere, or hidden by a newer turn)"), true
	case errors.As(err, &re) && re.Status == 404:
		return notify.Failed("kandev does not know this question any more"), false
	}
	return notify.Error(err, kandevapi.Classify(err)), false
}

// theirs is the failure of an answer someone gave first, saying theirs.
func theirs(b Bundle) notify.Sent {
	return notify.Failed("someone answered in kandev first: " + Words(b.Recorded, b.Labels))
}

// permission answers a permission request unless kandev's row says it no
// longer waits, or an earlier request may still land.
func (o *Outlet) permission(ctx context.Context, at notify.Attempt, b model.ClickBody, snap *model.Snapshot) notify.Sent {
	p := PermissionIn(snap, at.Episode.SessionID, b.PendingID)
	if s, send := PermissionStep(p, at.MayHaveLanded, at.Now.Sub(at.Action.CreatedAt)); !send {
		if s.Outcome != nil && s.Outcome.State == model.StatePending {
			return notify.Wait(at.Action, at.Now.Add(10*time.Second), s.Outcome.Error)
		}
		return s
	}
	if why := policy.NoLongerOffered(o.Current(snap, at.Episode), b); why != "" {
		return notify.Superseded(why)
	}
	e := at.Episode
	if err := o.Kandev.RespondPermission(ctx, e.TaskID, e.SessionID, b.RequestID, b.PendingID, b.OptionID); err != nil {
		return notify.Error(err, kandevapi.Classify(err))
	}
	return notify.Delivered("", "")
}

// PermissionStep says whether to send a permission answer now, from what
// kandev's row shows, whether an earlier attempt may have landed, and how
// long since the click. Without an idempotency key, an answer that may have
// landed is settled delivered once the row no longer waits (or left the
// read), and is never sent again while it waits: it waits up to
// PermissionSettle, then gives up, saying so. When not sending, s says how
// it settles; a pending outcome means wait and look again.
func PermissionStep(p Permission, mayHaveLanded bool, since time.Duration) (s notify.Sent, send bool) {
	switch {
	case mayHaveLanded && !p.Pending:
		return notify.Delivered("", ""), false
	case p.Seen && !p.Pending:
		return notify.Failed("the permission was answered in kandev already (" + p.Status + ")"), false
	case !p.Seen:
		return notify.Superseded("the permission is no longer waiting in kandev (its turn moved on)"), false
	case mayHaveLanded && since < PermissionSettle:
		return notify.Sent{Outcome: &model.Outcome{State: model.StatePending, Error: "an earlier answer may have reached kandev; waiting for kandev to record it"}}, false
	case mayHaveLanded:
		return notify.Failed("kandev did not record the answer of a request whose reply was lost; answer the permission in kandev"), false
	}
	return notify.Sent{}, true
}
