package policy

import (
	"strings"

	"github.com/watchdogd/watchdogd/internal/model"
)

// missing handles an open episode this scan did not report: it resolves
// once it has been gone for its kind's resolve_hold, superseding what is
// still pending, and each outlet that heard of it is told it cleared.
func (p *planner) missing(e model.Episode) {
	since := e.MissingSince
	if since.IsZero() {
		since = p.in.Now
		p.plan.Missing = append(p.plan.Missing, model.Missing{ID: e.ID, Since: since})
	}
	if p.in.Now.Sub(since) < p.policy(e.Kind).ResolveHold {
		return // damp flapping: not gone for long enough
	}
	p.plan.Resolve = append(p.plan.Resolve, model.Resolve{ID: e.ID, At: p.in.Now, Reason: p.in.Reason(e)})
	for _, a := range e.Actions {
		// A click's story is told whatever became of the click: the
		// person who clicked is never left without an answer.
		if a.State == model.StatePending && !a.Uncertain && !strings.HasPrefix(a.Seq, "tell/") {
			p.plan.Supersede = append(p.plan.Supersede, a.Key)
		}
	}
	if !p.policy(e.Kind).ResolveEnabled() {
		return
	}
	p.resolveSlack(e)
	p.resolveOthers(e)
}

// resolveSlack edits the first Slack message in place when it was (or may
// have been) sent, unless a click's story says how it ended there already.
// A first message that never went out resolves silently.
func (p *planner) resolveSlack(e model.Episode) {
	first := firstSlack(e, nil)
	if first == nil || p.in.Routing == nil || !mayHaveLanded(*first) || Told(e) {
		return
	}
	a := model.Action{Key: Key(e.ID, "resolve"), EpisodeID: e.ID, Seq: "resolve", Kind: model.ActionSlackUpdate,
		Channel: first.Channel, ParentKey: first.Key, CreatedAt: p.in.Now, NextAttempt: p.in.Now}
	a.Digest = Digest(a, e.Identity)
	p.plan.Actions = append(p.plan.Actions, a)
}

// firstSlack is the episode's first live Slack post: the message later
// steps reply to and a resolve edits.
func firstSlack(e model.Episode, excluded map[string]bool) *model.Action {
	for i, a := range e.Actions {
		if a.Kind != model.ActionSlack || excluded[a.Key] || a.State == model.StateSuperseded || a.State == model.StateFailed {
			continue
		}
		return &e.Actions[i]
	}
	return nil
}

// resolveOthers tells each outlet but Slack that heard of the episode that
// it cleared: one resolve per action kind and channel whose first step was
// (or may have been) sent, in reply to that step, so that it goes out after
// it. A step that never went out is followed by nothing.
func (p *planner) resolveOthers(e model.Episode) {
	told := map[[2]string]bool{}
	for _, a := range e.Actions {
		resolve, ok := p.in.Resolves[a.Kind]
		where := [2]string{string(a.Kind), a.Channel}
		if !ok || !strings.HasPrefix(a.Seq, "step/") || !mayHaveLanded(a) || told[where] {
			continue
		}
		told[where] = true
		seq := "resolve/" + string(a.Kind) + "/" + a.Channel
		r := model.Action{Key: Key(e.ID, seq), EpisodeID: e.ID, Seq: seq, Kind: resolve, Channel: a.Channel, ParentKey: a.Key,
			CreatedAt: p.in.Now, NextAttempt: p.in.Now}
		r.Digest = Digest(r, e.Identity)
		p.plan.Actions = append(p.plan.Actions, r)
	}
}

// mayHaveLanded says whether an action went out or may have: delivered,
// in flight, or pending after an attempt that may have landed.
func mayHaveLanded(a model.Action) bool {
	return a.State == model.StateDelivered || a.State == model.StateClaimed || a.State == model.StatePending && a.Uncertain
}
