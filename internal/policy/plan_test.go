package policy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func strp(s string) *string { return &s }

func finding(kind model.Kind, since time.Time) scan.Finding {
	return scan.Finding{Kind: kind, SessionID: "s1", TaskID: "t1", TaskTitle: "Fix login", WorkspaceID: "ws-web",
		TurnID: strp("turn-1"), PendingID: strp("p1"), SinceTime: since}
}

// configure gives a decision c's ladders and routing (none without a
// slack: block).
func configure(in *Input, c *config.Config) { in.Policies, in.Routing = c.Policy, c.Routing() }

func cfgWith(yaml string) *config.Config {
	c, err := config.Parse("test.yaml", []byte(yaml), func(string) string { return "tok" })
	if err != nil {
		panic(err)
	}
	return c
}

var slackCfg = cfgWith(`
slack:
  token_file: /dev/null
  default_channel: C-default
  default_mention: "<!here>"
  routes:
    - match: {workspace_id: ws-ops}
      channel: C-ops
      mention: "<!subteam^S1>"
`)

func input(now time.Time, fs ...scan.Finding) Input {
	n := 0
	return Input{Now: now, Findings: fs, Policies: slackCfg.Policy, Routing: slackCfg.Routing(),
		Reason: func(model.Episode) model.Reason { return model.Because(model.ClearedAnswered) },
		NewID:  func() string { n++; return fmt.Sprintf("ep%d", n) }}
}

// episode turns a plan's new episode plus decided actions (with states)
// into ledger state for the next cycle.
func episode(p model.Plan, states ...model.State) model.Ledger {
	e := p.Open[0]
	for i, a := range p.Actions {
		a.State = model.StatePending
		if i < len(states) {
			a.State = states[i]
		}
		e.Actions = append(e.Actions, a)
	}
	return model.Ledger{Open: []model.Episode{e}}
}

func seqs(as []model.Action) string {
	var out []string
	for _, a := range as {
		s := a.Seq + ":" + string(a.Kind)
		if a.Channel != "" {
			s += "@" + a.Channel
		}
		if a.Mention != "" {
			s += "+mention"
		}
		if a.ParentKey != "" {
			s += "^parent"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestDecideLifecycle(t *testing.T) {
	m := time.Minute
	f := finding(model.KindStalledTurn, t0.Add(-20*m))

	// A new finding opens an episode and decides its first step: a
	// top-level Slack post to the default channel.
	p1 := Decide(model.Ledger{}, input(t0, f))
	if len(p1.Open) != 1 || seqs(p1.Actions) != "step/stalled_turn/0/0:slack@C-default" {
		t.Fatalf("first cycle: open %d, actions %q", len(p1.Open), seqs(p1.Actions))
	}
	first := p1.Actions[0]

	// Next cycle, still reported, first step delivered: the same decision
	// again (same key and digest: nothing new, so no action in the plan),
	// the episode refreshed.
	st := episode(p1, model.StateDelivered)
	p2 := Decide(st, input(t0.Add(m), f))
	if len(p2.Open) != 0 || len(p2.Refresh) != 1 || len(p2.Actions) != 0 || len(p2.Supersede) != 0 {
		t.Fatalf("second cycle: %+v", p2)
	}

	// 30 minutes after since, the second step (mention) replies in the
	// thread of the first message.
	p3 := Decide(st, input(t0.Add(10*m), f))
	if seqs(p3.Actions) != "step/stalled_turn/1/0:slack@C-default+mention^parent" || p3.Actions[0].ParentKey != first.Key {
		t.Fatalf("step 2: %q", seqs(p3.Actions))
	}

	// The finding is gone: the episode resolves, and the delivered first
	// message is edited in place.
	p4 := Decide(st, input(t0.Add(11*m)))
	if len(p4.Resolve) != 1 || p4.Resolve[0].Reason.Words() != "answered" || seqs(p4.Actions) != "resolve:slack_update@C-default^parent" {
		t.Fatalf("resolve: %+v actions %q", p4.Resolve, seqs(p4.Actions))
	}
}

func TestDecideRules(t *testing.T) {
	m := time.Minute
	stalled := finding(model.KindStalledTurn, t0.Add(-20*m))
	question := finding(model.KindUnansweredClarification, t0.Add(-20*m))
	shadowed := question
	shadowed.Kind = model.KindShadowedClarification
	ops := stalled
	ops.WorkspaceID = "ws-ops"
	open := func(f scan.Finding, states ...model.State) model.Ledger {
		return episode(Decide(model.Ledger{}, input(t0, f)), states...)
	}
	noSlack := input(t0.Add(40*m), stalled)
	configure(&noSlack, cfgWith(""))
	// nudging is input under a config that nudges every kind at once, as
	// check-config would refuse: policy must not rely on it.
	nudging := func(action model.ActionKind, f scan.Finding) Input {
		in := input(t0, f)
		c := *slackCfg
		c.Policy = map[model.Kind]*model.Policy{f.Kind: {Steps: []model.Step{{Action: action}}}}
		configure(&in, &c)
		return in
	}
	permission, interrupted := question, question
	permission.Kind, interrupted.Kind = model.KindPendingPermission, model.KindInterruptedSession

	cases := []struct {
		name  string
		st    model.Ledger
		in    Input
		want  string // decided actions
		check func(model.Plan) error
	}{
		// The first post was deferred (still pending) when the second step
		// came due: it is superseded and the second step goes out alone, as
		// the top-level message — no burst after a silence.
		{"newest step supersedes a deferred one", open(stalled, model.StatePending), input(t0.Add(10*m), stalled),
			"step/stalled_turn/1/0:slack@C-default+mention", func(p model.Plan) error {
				if len(p.Supersede) != 1 {
					return fmt.Errorf("superseded %v", p.Supersede)
				}
				return nil
			}},
		// A pending first post that may have landed (timeout) is kept: its
		// next attempt looks for evidence first.
		{"an uncertain first post is not superseded", func() model.Ledger {
			st := open(stalled, model.StatePending)
			st.Open[0].Actions[0].Uncertain = true
			return st
		}(), input(t0.Add(10*m), stalled), "step/stalled_turn/1/0:slack@C-default+mention^parent", nil},
		// The question turned from unanswered to shadowed: one episode, a
		// thread reply about the change.
		{"kind flip is a thread reply", open(question, model.StateDelivered), input(t0.Add(m), shadowed),
			"step/shadowed_clarification/0/0:slack@C-default+mention^parent", func(p model.Plan) error {
				if p.Refresh[0].Kind != model.KindShadowedClarification || p.Refresh[0].KindChanges != 1 || len(p.Open) != 0 {
					return fmt.Errorf("refresh %+v open %d", p.Refresh, len(p.Open))
				}
				return nil
			}},
		// Never sent (deferred), then cleared: resolves silently.
		{"resolve without a sent message is silent", open(stalled, model.StatePending), input(t0.Add(m)), "",
			func(p model.Plan) error {
				if len(p.Resolve) != 1 || len(p.Supersede) != 1 {
					return fmt.Errorf("resolve %v supersede %v", p.Resolve, p.Supersede)
				}
				return nil
			}},
		// A claimed first post may be landing right now: edit it when it
		// settles.
		{"resolve after an in-flight post edits it", open(stalled, model.StateClaimed), input(t0.Add(m)), "resolve:slack_update@C-default^parent", nil},
		// Routes match by workspace; the ops route's mention is used only on
		// steps that ask for it.
		{"routes by workspace", model.Ledger{}, input(t0.Add(10*m), ops), "step/stalled_turn/1/0:slack@C-ops+mention", nil},
		// A nudge while a human owes an answer would destroy the question
		// in kandev: even under a config that got past check-config, it is
		// logged, never sent, in either form.
		{"no nudge on an unanswered question", model.Ledger{}, nudging(model.ActionNudge, question), "step/unanswered_clarification/0/0:log", nil},
		{"no cancel_and_nudge on a pending permission", model.Ledger{}, nudging(model.ActionCancelAndNudge, permission),
			"step/pending_permission/0/0:log", nil},
		// Elsewhere a configured nudge is sent: a hidden question cannot be
		// answered in kandev anyway, and a parked session wants resuming.
		{"nudge on a hidden question", model.Ledger{}, nudging(model.ActionNudge, shadowed), "step/shadowed_clarification/0/0:nudge", nil},
		{"nudge on a parked session", model.Ledger{}, nudging(model.ActionNudge, interrupted), "step/interrupted_session/0/0:nudge", nil},
		// Without a slack: block, Slack steps are logged.
		{"no slack block logs", model.Ledger{}, noSlack, "step/stalled_turn/1/0:log", nil},
		// Clarifications repeat hourly with a mention; 5h after since only
		// the newest repeat is decided.
		{"only the newest repeat", open(question, model.StateDelivered), input(t0.Add(5*time.Hour), question),
			"step/unanswered_clarification/1/4:slack@C-default+mention^parent", nil},
		// Flipping back to a ladder whose newest step was already decided:
		// the change is a reply of its own (the step, decided as before,
		// is not decided again).
		{"flip back is a kind reply", func() model.Ledger {
			st := open(question, model.StateDelivered)
			st.Open[0].Kind = model.KindShadowedClarification
			return st
		}(), input(t0.Add(m), question), "kind/1:slack@C-default^parent", nil},
		// The due step is stored with the digest it would get now: nothing
		// to decide (a storm's open episodes cost no writes per cycle).
		{"a step decided as before is left out", open(stalled, model.StatePending), input(t0.Add(m), stalled), "", nil},
		// The route changed since the step was stored: it is decided again
		// with its new digest, for the ledger to count the conflict.
		{"a step decided otherwise now is a conflict", open(stalled, model.StatePending), func() Input {
			in := input(t0.Add(m), stalled)
			configure(&in, cfgWith("slack:\n  token_file: /dev/null\n  default_channel: C-new\n"))
			return in
		}(), "step/stalled_turn/0/0:slack@C-new", nil},
	}
	for _, c := range cases {
		p := Decide(c.st, c.in)
		if got := seqs(p.Actions); got != c.want {
			t.Errorf("%s: actions %q, want %q", c.name, got, c.want)
			continue
		}
		if c.check != nil {
			if err := c.check(p); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		}
	}
}

// TestResolveHold: with resolve_hold, a finding that disappears for one
// cycle only marks the episode; it resolves once gone for the hold.
func TestResolveHold(t *testing.T) {
	m := time.Minute
	cfg := cfgWith("policy:\n  stalled_turn:\n    resolve_hold: 5m\n")
	f := finding(model.KindStalledTurn, t0.Add(-20*m))
	in := input(t0, f)
	configure(&in, cfg) // no slack: block
	st := episode(Decide(model.Ledger{}, in), model.StateDelivered)
	in.Now, in.Findings = t0.Add(m), nil
	p := Decide(st, in)
	if len(p.Missing) != 1 || len(p.Resolve) != 0 {
		t.Fatalf("first miss: missing %v resolve %v", p.Missing, p.Resolve)
	}
	st.Open[0].MissingSince = t0.Add(m)
	in.Now = t0.Add(6 * m)
	if p := Decide(st, in); len(p.Resolve) != 1 || len(p.Missing) != 0 {
		t.Fatalf("after the hold: missing %v resolve %v", p.Missing, p.Resolve)
	}
	// Seen again before the hold: refreshed (which clears missing_since).
	in.Now, in.Findings = t0.Add(3*m), []scan.Finding{f}
	if p := Decide(st, in); len(p.Refresh) != 1 || len(p.Resolve) != 0 {
		t.Fatalf("back before the hold: %+v", p)
	}
}

// TestDigestFollowsConfig: changing the channel changes the digest of the
// same key — the ledger counts that as a conflict.
func TestDigestFollowsConfig(t *testing.T) {
	f := finding(model.KindStalledTurn, t0)
	a := Decide(model.Ledger{}, input(t0, f)).Actions[0]
	in := input(t0, f)
	configure(&in, cfgWith("slack:\n  token_file: /dev/null\n  default_channel: C-other\n"))
	b := Decide(model.Ledger{}, in).Actions[0]
	if a.Key != b.Key || a.Digest == b.Digest {
		t.Fatalf("key %s/%s digest %s/%s", a.Key, b.Key, a.Digest, b.Digest)
	}
}

func TestQuietHours(t *testing.T) {
	hm := func(s string) model.ClockTime {
		var c model.ClockTime
		var h, m int
		fmt.Sscanf(s, "%d:%d", &h, &m)
		c.Set, c.Minutes = true, h*60+m
		return c
	}
	night := &model.QuietHours{Timezone: "Europe/Berlin", Start: hm("22:00"), End: hm("07:00"), Days: []string{"mon", "tue", "wed", "thu", "fri"}}
	lunch := &model.QuietHours{Timezone: "UTC", Start: hm("12:00"), End: hm("13:00")}
	// Every night, in a zone with daylight saving time: the window follows
	// the local clock, so its end moves by an hour in UTC across a change.
	nightly := &model.QuietHours{Timezone: "Europe/Berlin", Start: hm("22:00"), End: hm("07:00")}
	cases := []struct {
		q    *model.QuietHours
		at   string
		want bool
	}{
		{night, "2026-11-30T22:30:00+01:00", true},  // Monday night
		{night, "2026-12-01T06:59:00+01:00", true},  // Tuesday early: Monday's window
		{night, "2026-12-01T07:00:00+01:00", false}, // window ended
		{night, "2026-12-05T23:00:00+01:00", false}, // Saturday night: not a quiet day
		{night, "2026-12-05T02:00:00+01:00", true},  // Saturday 02:00 belongs to Friday's window
		{night, "2026-12-07T02:00:00+01:00", false}, // Monday 02:00 belongs to Sunday's window
		{nightly, "2026-03-28T05:59:00Z", true},     // 06:59 CET, the day before clocks go forward
		{nightly, "2026-03-29T04:59:00Z", true},     // 06:59 CEST, the night they went forward
		{nightly, "2026-03-29T05:00:00Z", false},    // 07:00 CEST
		{nightly, "2026-10-24T05:30:00Z", false},    // 07:30 CEST
		{nightly, "2026-10-25T05:30:00Z", true},     // 06:30 CET, the night they went back
		{nightly, "2026-10-25T06:00:00Z", false},    // 07:00 CET
		{nightly, "2026-10-24T20:30:00Z", true},     // 22:30 CEST
		{lunch, "2026-12-05T12:30:00Z", true},
		{lunch, "2026-12-05T13:00:00Z", false},
		{nil, "2026-12-05T12:30:00Z", false},
	}
	for _, c := range cases {
		at, _ := time.Parse(time.RFC3339, c.at)
		if got := Quiet(c.q, at); got != c.want {
			t.Errorf("Quiet(%s) = %v, want %v", c.at, got, c.want)
		}
	}
	e := model.Episode{WorkspaceID: "ws-web", Kind: model.KindStalledTurn}
	s := []Silence{{Matchers: model.FromMatch(model.Match{Kind: model.KindStalledTurn}), Until: t0.Add(time.Hour)}}
	if d, _ := Deferred(e, s, nil, t0); !d {
		t.Error("a matching silence defers")
	}
	if d, _ := Deferred(e, s, nil, t0.Add(2*time.Hour)); d {
		t.Error("an expired silence does not")
	}
	e.Kind = model.KindNeverStarted
	if d, _ := Deferred(e, s, nil, t0); d {
		t.Error("a silence for another kind does not")
	}
}

// TestNoRepeatOnTheHeelsOfAPost: an old question seen for the first time
// (watchdogd's first start) is posted at once, with the newest due
// repeat; its next since-anchored repeat comes due 20 s later and is
// skipped, so the channel is not pinged twice for nothing new; the repeat
// after that goes out a full period later.
func TestNoRepeatOnTheHeelsOfAPost(t *testing.T) {
	m := time.Minute
	// Ladder: post at since, mention at 1h, repeat every 1h; repeat 12 of
	// the mention step comes due at t0+20s.
	f := finding(model.KindUnansweredClarification, t0.Add(-13*time.Hour+20*time.Second))
	p1 := Decide(model.Ledger{}, input(t0, f))
	if seqs(p1.Actions) != "step/unanswered_clarification/1/11:slack@C-default+mention" {
		t.Fatalf("first cycle: %q", seqs(p1.Actions))
	}
	st := episode(p1, model.StateDelivered)
	st.Open[0].Actions[0].UpdatedAt = t0
	if p := Decide(st, input(t0.Add(m), f)); len(p.Actions) != 0 {
		t.Fatalf("a minute after the post: %q, want nothing", seqs(p.Actions))
	}
	// Had the post still been pending (deferred), the newer repeat would
	// replace it: nothing went out, so nothing is covered.
	pending := episode(p1)
	if p := Decide(pending, input(t0.Add(m), f)); seqs(p.Actions) != "step/unanswered_clarification/1/12:slack@C-default+mention" || len(p.Supersede) != 1 {
		t.Fatalf("over a pending post: %q, superseded %d", seqs(p.Actions), len(p.Supersede))
	}
	if p := Decide(st, input(t0.Add(time.Hour+m), f)); seqs(p.Actions) != "step/unanswered_clarification/1/13:slack@C-default+mention^parent" {
		t.Fatalf("an hour later: %q", seqs(p.Actions))
	}
}
