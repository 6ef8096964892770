package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// TemplateVersion is part of every decision's digest: a change to how
// messages are rendered is a different decision.
const TemplateVersion = "1"

// Input is everything one decision reads besides the ledger state.
type Input struct {
	Now      time.Time
	Findings []scan.Finding
	// Policies are the ladders by finding kind; a kind without one takes
	// model.DefaultPolicy.
	Policies map[model.Kind]*model.Policy
	// Routing is where Slack steps go; nil when the config has no slack:
	// block, and Slack steps then run as log.
	Routing *model.Routing
	// Reason says how an episode cleared (the turn completed, answered,
	// the session ended), from the current snapshot.
	Reason func(model.Episode) model.Reason
	// NewID mints episode ids.
	NewID func() string
	// Resolves names, for each step action kind other than Slack's (whose
	// resolve edits its first message), the action that tells an outlet
	// an episode cleared; a kind without one is told nothing.
	Resolves map[model.ActionKind]model.ActionKind
	// Members is how many Alertmanagers alertmanager.urls lists: an
	// Alertmanager step is one action per member, each its own lane
	// (member 0's seq and channel are the step's own; member i's seq ends
	// in /member/i, its channel is i).
	Members int
}

// Identity matches a finding to its episode across cycles: kind, session,
// turn and pending id, with both clarification kinds as one, so a question
// that turns from unanswered to shadowed stays one episode.
func Identity(f scan.Finding) string {
	kind := string(f.Kind)
	if f.Kind.Question() {
		kind = "clarification"
	}
	// "|" separates the parts; one inside an id is escaped, so that no two
	// findings share an identity by where their ids put it.
	id := strings.Join([]string{kind, identityPart(f.SessionID), identityPart(deref(f.TurnID)), identityPart(deref(f.PendingID))}, "|")
	if len(id) > maxIdentity {
		sum := sha256.Sum256([]byte(id))
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	return id
}

func identityPart(s string) string {
	if !strings.ContainsAny(s, `\|`) {
		return s // kandev's ids: UUIDs
	}
	return strings.NewReplacer(`\`, `\\`, "|", `\|`).Replace(s)
}

// maxIdentity bounds an identity as stored: the ledger indexes it, and
// PostgreSQL refuses an index entry over 2,704 bytes, which would fail
// every decision while one such finding exists. kandev's ids are UUIDs;
// one that is not (a pending id in agent-written metadata, say) is hashed.
const maxIdentity = 512

// Key is an action's idempotency key: a hash of the episode id and the
// decision's place in the episode (step and repeat, kind change, resolve).
func Key(episodeID, seq string) string {
	sum := sha256.Sum256([]byte(episodeID + "\x00" + seq))
	return hex.EncodeToString(sum[:16])
}

// Digest fingerprints a decision: the same key with another digest is a
// conflict (the config changed under a decided action).
func Digest(a model.Action, identity string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{"v" + TemplateVersion, string(a.Kind), a.Channel, a.Mention, a.ParentKey, identity, a.Seq}, "\x00")))
	return hex.EncodeToString(sum[:16])
}

// Decide is the pure decision of one cycle: open, refresh and resolve
// episodes from the findings, and decide each open episode's due step.
func Decide(st model.Ledger, in Input) model.Plan {
	p := planner{in: in, plan: model.Plan{Now: in.Now}}
	byIdentity := map[string]model.Episode{}
	for _, e := range st.Open {
		byIdentity[e.Identity] = e
	}
	seen := map[string]bool{}
	for _, f := range in.Findings {
		id := Identity(f)
		if seen[id] {
			continue
		}
		seen[id] = true
		if e, ok := byIdentity[id]; ok {
			p.refresh(e, f)
		} else {
			p.open(id, f)
		}
	}
	for _, e := range st.Open {
		if !seen[e.Identity] {
			p.missing(e)
		}
	}
	return p.plan
}

type planner struct {
	in   Input
	plan model.Plan
}

func (p *planner) policy(kind model.Kind) *model.Policy {
	if pol, ok := p.in.Policies[kind]; ok && pol != nil {
		return pol
	}
	def := model.DefaultPolicy(kind)
	return &def
}

func (p *planner) open(identity string, f scan.Finding) {
	e := model.Episode{
		ID: p.in.NewID(), Identity: identity, Kind: f.Kind, SessionID: f.SessionID, TaskID: f.TaskID,
		WorkspaceID: f.WorkspaceID, TurnID: deref(f.TurnID), PendingID: deref(f.PendingID), TaskTitle: f.TaskTitle,
		Since: f.SinceTime, OpenedAt: p.in.Now, LastSeen: p.in.Now, Finding: findingJSON(f),
	}
	p.plan.Open = append(p.plan.Open, e)
	p.steps(e)
}

// refresh updates an episode still reported. A question that turned from
// unanswered to shadowed (or back) follows the new kind's ladder; the change
// itself is a thread reply — the new ladder's Slack step when one is newly
// due, else a reply of its own.
func (p *planner) refresh(e model.Episode, f scan.Finding) {
	flipped := f.Kind != e.Kind
	if flipped {
		e.KindChanges++
		e.Kind = f.Kind
	}
	e.TaskTitle, e.Finding = f.TaskTitle, findingJSON(f)
	p.plan.Refresh = append(p.plan.Refresh, model.Refresh{ID: e.ID, Kind: e.Kind, KindChanges: e.KindChanges,
		TaskTitle: f.TaskTitle, LastSeen: p.in.Now, Finding: e.Finding})
	if newSlack := p.steps(e); flipped && !newSlack && firstSlack(e, nil) != nil {
		p.decide(e, fmt.Sprintf("kind/%d", e.KindChanges), 0, 0, model.Step{Action: model.ActionSlack}, "")
	}
}

// steps decides, for each destination of its kind's ladder (a Slack
// channel, a webhook, Alertmanager, kandev, the log), the newest due step,
// superseding older pending steps to that destination only: a later step
// elsewhere never replaces it. It reports whether a Slack step was newly
// decided (which tells a kind change in the thread).
func (p *planner) steps(e model.Episode) (newSlack bool) {
	pol := p.policy(e.Kind)
	for _, occ := range p.due(e) {
		step, seq := pol.Steps[occ.Step], stepSeq(e.Kind, occ)
		fresh := actionBySeq(e, seq) == nil
		if fresh && RepeatCovered(occ, pol, lastStepSent(e, p.destination(e, step))) {
			continue
		}
		p.decide(e, seq, occ.Step, occ.Repeat, step, "")
		for _, m := range p.memberSeqs(seq, p.kindOf(e, step)) {
			p.decide(e, m[0], occ.Step, occ.Repeat, step, m[1])
		}
		newSlack = newSlack || fresh && p.kindOf(e, step) == model.ActionSlack
	}
	return newSlack
}

// due is the episode's newest due step to each destination of its kind's
// ladder.
func (p *planner) due(e model.Episode) []Occurrence {
	return DueSteps(e.Since, p.policy(e.Kind), p.in.Now, func(s model.Step) string { return p.destination(e, s) })
}

// stepSeq names a step occurrence within its episode.
func stepSeq(kind model.Kind, occ Occurrence) string {
	return fmt.Sprintf("step/%s/%d/%d", kind, occ.Step, occ.Repeat)
}

// kindOf is what a step of episode e runs as (actionKind).
func (p *planner) kindOf(e model.Episode, s model.Step) model.ActionKind {
	return actionKind(s.Action, e.Kind, p.in.Routing != nil)
}

// destination is where a step of episode e goes: every Slack step of an
// episode to its route's channel, a webhook step to its webhook.
func (p *planner) destination(e model.Episode, s model.Step) string {
	kind := p.kindOf(e, s)
	switch kind {
	case model.ActionSlack:
		ch, _ := Route(*p.in.Routing, e)
		return model.Destination(kind, ch)
	case s.Action:
		return model.Destination(kind, s.Webhook)
	}
	return model.Destination(kind, "")
}

// destinationOf is where a decided action went (destination's view of it).
func destinationOf(a model.Action) string { return model.Destination(a.Kind, a.Channel) }

// Wanted names the stored actions Decide needs that st may lack: each
// still-reported episode's newest due step to each destination that st
// does not hold. Under one
// policy that step is stored only as the newest of its ladder, which the
// ledger loads; a policy edited while the episode is open can make an older
// step due again, and Decide must see that it exists (to decide it again,
// not anew). Most keys named are of steps not decided yet, and find nothing.
func Wanted(st model.Ledger, in Input) []string {
	p := planner{in: in}
	byIdentity := map[string]model.Episode{}
	for _, e := range st.Open {
		byIdentity[e.Identity] = e
	}
	var keys []string
	for _, f := range in.Findings {
		e, ok := byIdentity[Identity(f)]
		if !ok {
			continue
		}
		delete(byIdentity, e.Identity) // Decide reads the first finding only
		e.Kind = f.Kind
		for _, occ := range p.due(e) {
			seq := stepSeq(e.Kind, occ)
			seqs := []string{seq}
			for _, m := range p.memberSeqs(seq, p.kindOf(e, p.policy(e.Kind).Steps[occ.Step])) {
				seqs = append(seqs, m[0])
			}
			for _, seq := range seqs {
				if actionBySeq(e, seq) == nil {
					keys = append(keys, Key(e.ID, seq))
				}
			}
		}
	}
	return keys
}

// decide adds one decision: what step (its index and repeat) says, to
// member (an Alertmanager's index, "" for the first or another outlet). A step
// already stored is decided again only to compare digests: it goes into the
// plan when the digest changed (a conflict, for the ledger to count), not
// when it is the same.
func (p *planner) decide(e model.Episode, seq string, index, repeat int, step model.Step, member string) {
	kind := p.kindOf(e, step)
	key := Key(e.ID, seq)
	a := model.Action{Key: key, EpisodeID: e.ID, Seq: seq, Step: index, Repeat: repeat, Kind: kind,
		CreatedAt: p.in.Now, NextAttempt: p.in.Now}
	existing := actionBySeq(e, seq)
	if existing != nil {
		a.ParentKey = existing.ParentKey // structure, not config: keep it
	} else {
		superseded := map[string]bool{}
		if strings.HasPrefix(seq, "step/") {
			dest := p.destination(e, step)
			for _, old := range e.Actions {
				if strings.HasPrefix(old.Seq, "step/") && old.State == model.StatePending && !old.Uncertain && destinationOf(old) == dest {
					superseded[old.Key] = true
					p.plan.Supersede = append(p.plan.Supersede, old.Key)
				}
			}
		}
		if kind == model.ActionSlack {
			if first := firstSlack(e, superseded); first != nil {
				a.ParentKey = first.Key
			}
		}
	}
	switch kind {
	case model.ActionSlack:
		a.Channel, a.Mention = Route(*p.in.Routing, e)
		if !step.Mention {
			a.Mention = ""
		}
	case model.ActionAlertmanager:
		a.Channel = member
	case step.Action: // as configured: to the step's webhook, if any
		a.Channel = step.Webhook
	}
	a.Digest = Digest(a, e.Identity)
	if existing != nil && existing.Digest == a.Digest {
		// Decided before, as now: saving it would change nothing. Leaving
		// it out spares a storm's every cycle a render, an insert and a
		// read per open episode; a different digest goes on, to be counted
		// as a conflict.
		return
	}
	p.plan.Actions = append(p.plan.Actions, a)
}

// lastStepSent is when the episode's newest step to dest went out, or may
// have: delivered, in flight, or pending after an attempt that may have
// landed.
func lastStepSent(e model.Episode, dest string) time.Time {
	var last time.Time
	for _, a := range e.Actions {
		if mayHaveLanded(a) && strings.HasPrefix(a.Seq, "step/") && destinationOf(a) == dest && a.UpdatedAt.After(last) {
			last = a.UpdatedAt
		}
	}
	return last
}

func actionBySeq(e model.Episode, seq string) *model.Action {
	for i, a := range e.Actions {
		if a.Seq == seq {
			return &e.Actions[i]
		}
	}
	return nil
}

// actionKind maps a configured action on an episode of finding kind to
// what runs: without a slack: block, Slack steps are logged (a fresh install
// does not crash-loop). A nudge while a human owes an answer would destroy
// the question (model.HumanOwesAnswer); check-config refuses such a
// config, and should one get past it, the step is logged, never sent.
// Any other action runs as configured: whichever outlet is registered for
// it delivers it (check-config knows which exist).
func actionKind(action model.ActionKind, finding model.Kind, slack bool) model.ActionKind {
	switch action {
	case model.ActionSlack:
		if !slack {
			return model.ActionLog
		}
		return model.ActionSlack
	case model.ActionNudge, model.ActionCancelAndNudge:
		if model.HumanOwesAnswer(finding) {
			return model.ActionLog
		}
		if action == model.ActionNudge {
			return model.ActionNudge
		}
		return model.ActionCancelAndNudge
	}
	return action
}

func findingJSON(f scan.Finding) string {
	b, err := json.Marshal(f)
	if err != nil {
		return "{}" // scan.Finding holds only strings and numbers
	}
	return string(b)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ForceResolve resolves one open episode by hand (`watchdogd episodes
// resolve`): the same resolve as when a finding clears, so a sent first
// message is edited to say so. It returns the episode resolved (the
// operator is told its session), nil when no open episode has that id.
func ForceResolve(st model.Ledger, id string, in Input) (model.Plan, *model.Episode) {
	p := planner{in: in, plan: model.Plan{Now: in.Now}}
	for i, e := range st.Open {
		if e.ID == id {
			e.MissingSince = in.Now.Add(-p.policy(e.Kind).ResolveHold)
			p.missing(e)
			return p.plan, &st.Open[i]
		}
	}
	return model.Plan{}, nil
}

// StoredFinding is the finding an episode last saw, as findingJSON stored
// it (it is no longer in the report: the episode is resolving).
func StoredFinding(e model.Episode) scan.Finding {
	var f scan.Finding
	if json.Unmarshal([]byte(e.Finding), &f) != nil || f.Kind == "" {
		f = scan.Finding{Kind: e.Kind, SessionID: e.SessionID, TaskID: e.TaskID, TaskTitle: e.TaskTitle, WorkspaceID: e.WorkspaceID}
	}
	f.SinceTime = e.Since
	return f
}
