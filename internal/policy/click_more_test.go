package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// TestResolvedQuestionTurnsShadowed: a resolve from Slack on a question
// still holds it once kandev shows it shadowed (the same episode, another
// kind), and ends only when neither shows; a silence without the
// episode's identity (made before it was stored) covers its kind only.
func TestResolvedQuestionTurnsShadowed(t *testing.T) {
	pid, turn := "p1", "turn-1"
	q := func(kind model.Kind) scan.Finding {
		return scan.Finding{SessionID: "s1", Kind: kind, TurnID: &turn, PendingID: &pid}
	}
	unanswered, shadowed := q(model.KindUnansweredClarification), q(model.KindShadowedClarification)
	other := scan.Finding{SessionID: "s1", Kind: model.KindStalledTurn, TurnID: &turn}
	withID := ClearSilence{ID: "sil", SessionID: "s1", Kind: model.KindUnansweredClarification, Identity: Identity(unanswered)}
	kindOnly := withID
	kindOnly.Identity = ""
	cases := []struct {
		name     string
		held     ClearSilence
		findings []scan.Finding
		left     int  // findings Unresolved keeps
		ended    bool // Cleared ends the silence
	}{
		{"unanswered, held", withID, []scan.Finding{unanswered}, 0, false},
		{"turned shadowed, still held", withID, []scan.Finding{shadowed}, 0, false},
		{"another finding of the session is not", withID, []scan.Finding{shadowed, other}, 1, false},
		{"the question gone: ended", withID, []scan.Finding{other}, 1, true},
		{"no identity: shadowed is not held, and it ends", kindOnly, []scan.Finding{shadowed}, 1, true},
	}
	for _, c := range cases {
		left := Unresolved(c.findings, []ClearSilence{c.held})
		ended := len(Cleared([]ClearSilence{c.held}, c.findings)) == 1
		if len(left) != c.left || ended != c.ended {
			t.Errorf("%s: %d findings left (want %d), ended %v (want %v)", c.name, len(left), c.left, ended, c.ended)
		}
	}
}

// TestSnoozedQuestionTurnsShadowed: a click's silence (with the episode's
// identity) defers the episode after its kind changes; a silence of the
// kind alone does not, nor one that ran out.
func TestSnoozedQuestionTurnsShadowed(t *testing.T) {
	now := time.Date(2026, 12, 3, 4, 0, 0, 0, time.UTC)
	e := model.Episode{ID: "ep1", Identity: "clarification|s1|turn-1|p1", SessionID: "s1", Kind: model.KindShadowedClarification}
	s := Silence{Matchers: model.FromMatch(model.Match{SessionID: "s1", Kind: model.KindUnansweredClarification}), Until: now.Add(time.Hour)}
	if s.Holds(e, now) {
		t.Fatal("a silence of the unanswered kind alone holds the shadowed question")
	}
	s.Identity = e.Identity
	if !s.Holds(e, now) {
		t.Fatal("a click's silence on the question does not hold it once shadowed")
	}
	if s.Holds(e, now.Add(2*time.Hour)) {
		t.Fatal("a click's silence holds after its end")
	}
	s.Identity = "clarification|s1|turn-1|p2"
	if s.Holds(e, now) {
		t.Fatal("a click's silence on another question holds this one")
	}
}

// TestAnswerAgainAfterFailure: an answer that did nothing (failed, or
// superseded) leaves "click again" open: the same click is then a new
// action, under a new key, where it used to meet the settled one and do
// nothing; clicked twice before it settled, it is still one action; one
// that may have landed is never tried again.
func TestAnswerAgainAfterFailure(t *testing.T) {
	one := &scan.Detail{Questions: []scan.Question{question("q1", "a", "b")}}
	alice := model.Click{Button: model.ButtonAnswer, Answers: answer("q1", "a"), User: "U0ALICE"}
	e := clickEpisode(model.KindUnansweredClarification)
	first := Click(e, alice, clickIn(one)).Click
	cases := []struct {
		state     model.State
		uncertain bool // an attempt may have landed
		sameKey   bool
	}{
		{model.StatePending, false, true},     // a double click: one action
		{model.StateClaimed, false, true},     // under way: one action
		{model.StateFailed, false, false},     // kandev unreachable or refusing: a new try
		{model.StateSuperseded, false, false}, // the finding moved on, then back: a new try
		{model.StateFailed, true, true},       // a reply lost: it may have landed, so never again
	}
	for _, c := range cases {
		f := first
		f.State, f.Uncertain = c.state, c.uncertain
		e.Actions = []model.Action{f}
		got := Click(e, alice, clickIn(one))
		if got.Refused != "" || (got.Click.Key == first.Key) != c.sameKey {
			t.Errorf("after a click %s: key %s (first %s), refused %q; want the same key: %v", c.state, got.Click.Key, first.Key, got.Refused, c.sameKey)
		}
	}
}

// TestNoSnoozeOverAnAnswer: once an answer from Slack was delivered (the
// message says so, buttons gone), a snooze or resolve from a stale view
// of the message is refused, naming who answered: its story, told from
// the message as first sent, would put the buttons back. Before the
// answer is delivered, a snooze still goes; and after a cancel and nudge,
// which may leave the alert open.
func TestNoSnoozeOverAnAnswer(t *testing.T) {
	one := &scan.Detail{Questions: []scan.Question{question("q1", "a", "b")}}
	alice := model.Click{Button: model.ButtonAnswer, Answers: answer("q1", "a"), User: "U0ALICE"}
	snooze := model.Click{Button: model.ButtonSnooze, Value: "1h", User: "U0BOB"}
	resolve := model.Click{Button: model.ButtonResolve, User: "U0BOB"}
	e := clickEpisode(model.KindUnansweredClarification)
	answered := Click(e, alice, clickIn(one)).Click
	for _, c := range []struct {
		state   model.State
		click   model.Click
		refused bool
	}{
		{model.StatePending, snooze, false},
		{model.StateDelivered, snooze, true},
		{model.StateDelivered, resolve, true},
		{model.StateFailed, resolve, false},
	} {
		a := answered
		a.State = c.state
		e.Actions = []model.Action{a}
		got := Click(e, c.click, clickIn(one))
		if (got.Refused != "") != c.refused || c.refused && !strings.Contains(got.Refused, "<@U0ALICE> answered this alert") {
			t.Errorf("%s after an answer %s: refused %q, want refused: %v", c.click.Button, c.state, got.Refused, c.refused)
		}
	}
	// A cancel and nudge delivered may leave the turn stalled (the alert
	// open, reminding): it can still be snoozed.
	stalled := clickEpisode(model.KindStalledTurn)
	cancel := Click(stalled, model.Click{Button: model.ButtonCancelAndNudge, User: "U0ALICE"}, clickIn(nil)).Click
	cancel.State = model.StateDelivered
	stalled.Actions = []model.Action{cancel}
	if cancel.Key == "" {
		t.Fatal("no cancel and nudge decided for a stalled turn")
	}
	if got := Click(stalled, snooze, clickIn(nil)); got.Refused != "" {
		t.Errorf("a snooze after a cancel and nudge: refused %q", got.Refused)
	}
}
