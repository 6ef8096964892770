package policy

import (
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// TestDecideEveryDestination: steps to different destinations never
// replace each other. With Slack now and Alertmanager a second later
// (check-config said SUCCESS for it), every episode went to Alertmanager
// only, with no Slack post: now both go, each once, and a later step to
// one destination supersedes only that destination's pending step.
func TestDecideEveryDestination(t *testing.T) {
	m := time.Minute
	cfg := cfgWith(`
slack:
  token_file: /dev/null
  default_channel: C-default
alertmanager:
  urls: ["http://am:9093"]
policy:
  stalled_turn:
    steps:
      - {after: 0s, action: slack}
      - {after: 1s, action: alertmanager}
      - {after: 30m, action: slack, mention: true}
`)
	f := finding(model.KindStalledTurn, t0.Add(-20*m)) // seen at stall_after and more
	in := input(t0, f)
	configure(&in, cfg)
	p1 := Decide(model.Ledger{}, in)
	if got := seqs(p1.Actions); got != "step/stalled_turn/0/0:slack@C-default step/stalled_turn/1/0:alertmanager" {
		t.Fatalf("first cycle: %q, want the Slack post and the alert", got)
	}
	if len(p1.Supersede) != 0 {
		t.Fatalf("first cycle supersedes %v", p1.Supersede)
	}

	// Both still pending (Slack held by quiet hours, say): the next cycle
	// decides nothing new and supersedes neither.
	st := episode(p1)
	in.Now = t0.Add(m)
	if p2 := Decide(st, in); len(p2.Actions) != 0 || len(p2.Supersede) != 0 {
		t.Fatalf("second cycle: actions %q supersede %v", seqs(p2.Actions), p2.Supersede)
	}

	// The mention is due: it replaces the pending Slack post, not the alert.
	in.Now = t0.Add(10 * m)
	p3 := Decide(st, in)
	if got := seqs(p3.Actions); got != "step/stalled_turn/2/0:slack@C-default" {
		t.Fatalf("third cycle: %q", got)
	}
	if len(p3.Supersede) != 1 || p3.Supersede[0] != p1.Actions[0].Key {
		t.Fatalf("third cycle supersedes %v, want the first Slack post only (%s)", p3.Supersede, p1.Actions[0].Key)
	}

	// Wanted names each destination's newest due step.
	if w := Wanted(model.Ledger{Open: []model.Episode{p1.Open[0]}}, in); len(w) != 2 {
		t.Fatalf("wanted %v, want the alert's and the mention's keys", w)
	}
}

// TestDestination: where each action goes; a nudge and a cancel_and_nudge
// both act on kandev's session, so one replaces the other.
func TestDestination(t *testing.T) {
	cases := []struct {
		kind    model.ActionKind
		channel string
		want    string
	}{
		{model.ActionSlack, "C1", "slack:C1"},
		{model.ActionWebhook, "ops", "webhook:ops"},
		{model.ActionAlertmanager, "", "alertmanager"},
		{model.ActionNudge, "", "kandev"},
		{model.ActionCancelAndNudge, "", "kandev"},
		{model.ActionLog, "", "log"},
	}
	for _, c := range cases {
		if got := model.Destination(c.kind, c.channel); got != c.want {
			t.Errorf("%s %q: %q, want %q", c.kind, c.channel, got, c.want)
		}
	}
}

// TestAlertmanagerStepPerMember: with three members, an Alertmanager step
// is three actions, one per member (each its own lane): the first keeps
// the step's seq and no channel (as with one member), the others end in
// /member/i with channel i. Wanted names all three; the next cycle
// decides none again; a cleared episode is resolved to each member its
// step may have reached, in reply to that member's step.
func TestAlertmanagerStepPerMember(t *testing.T) {
	cfg := cfgWith(`
alertmanager:
  urls: ["http://am0:9093", "http://am1:9093", "http://am2:9093"]
policy:
  stalled_turn:
    steps: [{after: 0s, action: alertmanager}]
`)
	f := finding(model.KindStalledTurn, t0.Add(-20*time.Minute))
	in := input(t0, f)
	configure(&in, cfg)
	in.Members = 3
	in.Resolves = map[model.ActionKind]model.ActionKind{model.ActionAlertmanager: model.ActionAlertmanager}
	p1 := Decide(model.Ledger{}, in)
	want := "step/stalled_turn/0/0:alertmanager step/stalled_turn/0/0/member/1:alertmanager@1 step/stalled_turn/0/0/member/2:alertmanager@2"
	if got := seqs(p1.Actions); got != want {
		t.Fatalf("first cycle: %q, want %q", got, want)
	}
	if w := Wanted(model.Ledger{Open: []model.Episode{p1.Open[0]}}, in); len(w) != 3 {
		t.Fatalf("Wanted %v, want the three members' keys", w)
	}
	st := episode(p1, model.StateDelivered, model.StateFailed, model.StateDelivered)
	if p2 := Decide(st, in); len(p2.Actions) != 0 || len(p2.Supersede) != 0 {
		t.Fatalf("second cycle: actions %q supersede %v", seqs(p2.Actions), p2.Supersede)
	}
	in.Findings = nil
	p3 := Decide(st, in)
	if got := seqs(p3.Actions); got != "resolve/alertmanager/:alertmanager^parent resolve/alertmanager/2:alertmanager@2^parent" {
		t.Fatalf("resolved: %q, want a resolve to members 0 and 2 (1 never took the alert)", got)
	}
}
