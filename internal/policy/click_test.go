package policy

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// TestWhoMayAct: a route's own lists replace the defaults (either list
// set, even empty); a route without lists takes them; empty lists admit
// nobody; a group admits its members as Slack named them, and a group
// Slack could not list admits nobody.
func TestWhoMayAct(t *testing.T) {
	r := model.Routing{
		Allowed: model.Actors{Users: []string{"U0ALICE"}, Usergroups: []string{"S0ONCALL"}},
		Routes: []model.Route{
			{Match: model.Match{WorkspaceID: "ws-ops"}, Channel: "C0OPS", AllowedUsers: []string{"U0BOB"}},
			{Match: model.Match{WorkspaceID: "ws-locked"}, Channel: "C0L", AllowedUsers: []string{}},
			{Match: model.Match{WorkspaceID: "ws-web"}, Channel: "C0WEB"},
			{Match: model.Match{WorkspaceID: "ws-ops"}, Channel: "C0SHADOWED", AllowedUsers: []string{"U0EVE"}},
		},
	}
	members := map[string][]string{"S0ONCALL": {"U0CAROL"}}
	for _, c := range []struct {
		workspace, user string
		want            bool
	}{
		{"ws-other", "U0ALICE", true},   // no route: the defaults
		{"ws-other", "U0CAROL", true},   // a member of a default group
		{"ws-other", "U0BOB", false},    // in no default list
		{"ws-ops", "U0BOB", true},       // the route's own list
		{"ws-ops", "U0ALICE", false},    // the route's list replaces the defaults
		{"ws-ops", "U0CAROL", false},    // the groups too
		{"ws-ops", "U0EVE", false},      // the first matching route wins
		{"ws-locked", "U0ALICE", false}, // an empty list admits nobody
		{"ws-web", "U0ALICE", true},     // a route without lists takes the defaults
		{"ws-other", "", false},         // no user
	} {
		got := MayAct(Actors(r, model.Episode{WorkspaceID: c.workspace}), c.user, members)
		if got != c.want {
			t.Errorf("%s in %s: may act %v, want %v", c.user, c.workspace, got, c.want)
		}
	}
	if MayAct(model.Actors{Usergroups: []string{"S0GONE"}}, "U0CAROL", members) {
		t.Error("a group Slack did not list admitted someone")
	}
}

var clickNow = time.Date(2026, 12, 1, 3, 10, 0, 0, time.UTC)

func question(id string, opts ...string) scan.Question {
	q := scan.Question{ID: id, Title: "Pick " + id}
	for _, o := range opts {
		q.Options = append(q.Options, scan.Option{ID: o, Label: "label-" + o})
	}
	return q
}

func clickEpisode(kind model.Kind) model.Episode {
	return model.Episode{ID: "ep1", Identity: "id1", Kind: kind, SessionID: "s1", PendingID: "p1"}
}

func clickIn(d *scan.Detail) ClickIn {
	return ClickIn{Now: clickNow, Finding: scan.Finding{Detail: d}, Text: "nudge text",
		First: &model.Action{Key: "first", ResultChannel: "C0ALERTS", ResultTS: "1.000001"}}
}

func answer(q string, opt string) []model.Answer {
	return []model.Answer{{QuestionID: q, Options: []string{opt}}}
}

// TestWhatAClickBecomes: each button becomes its action, with what it
// does frozen in its body, and a story told on the first message; a click
// that does not fit the episode becomes nothing, saying why.
func TestWhatAClickBecomes(t *testing.T) {
	one := &scan.Detail{Questions: []scan.Question{question("q1", "a", "b")}}
	two := &scan.Detail{Questions: []scan.Question{question("q1", "a", "b"), question("q2", "x")}}
	perm := &scan.Detail{PermissionRequestID: "r1", PermissionOptions: []scan.PermissionOption{{ID: "o1", Name: "Allow once", Kind: "allow_once"}}}
	for _, c := range []struct {
		name   string
		kind   model.Kind
		d      *scan.Detail
		click  model.Click
		want   model.ActionKind
		what   string
		refuse string // a substring of why it becomes nothing
	}{
		{"an option of the one question", model.KindUnansweredClarification, one,
			model.Click{Button: model.ButtonAnswer, Answers: answer("q1", "b")}, model.ActionAnswer, "label-b", ""},
		{"an option the question does not offer", model.KindUnansweredClarification, one,
			model.Click{Button: model.ButtonAnswer, Answers: answer("q1", "zzz")}, "", "", "offers no such option"},
		{"one answer for a bundle of two", model.KindUnansweredClarification, two,
			model.Click{Button: model.ButtonAnswer, Answers: answer("q1", "a")}, "", "", "exactly one answer per question"},
		{"a form answering both, one by text", model.KindUnansweredClarification, two,
			model.Click{Button: model.ButtonAnswers, Answers: []model.Answer{{QuestionID: "q2", Text: "neither"}, {QuestionID: "q1", Options: []string{"a"}}}},
			model.ActionAnswer, "“neither”; label-a", ""},
		{"a form answering one question twice", model.KindUnansweredClarification, two,
			model.Click{Button: model.ButtonAnswers, Answers: []model.Answer{{QuestionID: "q1", Text: "x"}, {QuestionID: "q1", Text: "y"}}}, "", "", "twice"},
		{"an empty answer", model.KindUnansweredClarification, one,
			model.Click{Button: model.ButtonAnswers, Answers: []model.Answer{{QuestionID: "q1", Text: "  "}}}, "", "", "one option or a text"},
		{"an answer to a question kandev now hides", model.KindShadowedClarification, one,
			model.Click{Button: model.ButtonAnswer, Answers: answer("q1", "a")}, "", "", "send your answer as a message"},
		{"send a hidden question's answer as a message", model.KindShadowedClarification, one,
			model.Click{Button: model.ButtonSendMessage, Answers: answer("q1", "a")}, model.ActionSendMessage, "label-a", ""},
		{"send as message once kandev shows it again", model.KindUnansweredClarification, one,
			model.Click{Button: model.ButtonSendMessage, Answers: answer("q1", "a")}, "", "", "shows this question again"},
		{"a permission option", model.KindPendingPermission, perm,
			model.Click{Button: model.ButtonPermission, Value: "o1"}, model.ActionPermission, "Allow once", ""},
		{"a permission option kandev does not offer", model.KindPendingPermission, perm,
			model.Click{Button: model.ButtonPermission, Value: "o9"}, "", "", "no such option"},
		{"a permission without a request id", model.KindPendingPermission, &scan.Detail{PermissionOptions: perm.PermissionOptions},
			model.Click{Button: model.ButtonPermission, Value: "o1"}, "", "", "not a permission"},
		{"cancel a stalled turn", model.KindStalledTurn, nil, model.Click{Button: model.ButtonCancelAndNudge}, model.ActionCancelAndNudge, "", ""},
		{"cancel while a person owes an answer", model.KindPendingPermission, perm,
			model.Click{Button: model.ButtonCancelAndNudge}, "", "", "not one to cancel"},
		{"snooze 4h", model.KindInterruptedSession, nil, model.Click{Button: model.ButtonSnooze, Value: "4h"}, model.ActionSnooze, "4h", ""},
		{"snooze for a week", model.KindInterruptedSession, nil, model.Click{Button: model.ButtonSnooze, Value: "168h"}, "", "", "1h or 4h"},
		{"resolve", model.KindMultipleOpenTurns, nil, model.Click{Button: model.ButtonResolve}, model.ActionResolve, "", ""},
		{"a button watchdogd never sent", model.KindStalledTurn, nil, model.Click{Button: "delete_everything"}, "", "", "does not know this button"},
	} {
		c.click.User = "U0ALICE"
		got := Click(clickEpisode(c.kind), c.click, clickIn(c.d))
		if c.refuse != "" {
			if got.Refused == "" || !strings.Contains(got.Refused, c.refuse) || got.Click.Key != "" {
				t.Errorf("%s: %+v, want refused with %q", c.name, got, c.refuse)
			}
			continue
		}
		if got.Refused != "" || got.Click.Kind != c.want {
			t.Errorf("%s: %+v, want a %s action", c.name, got, c.want)
			continue
		}
		b, err := model.DecodeClick(got.Click.Body)
		if err != nil || b.What != c.what || b.User != "U0ALICE" || b.Channel != "C0ALERTS" || b.TS != "1.000001" {
			t.Errorf("%s: body %+v (%v), want what %q told on the first message", c.name, b, err, c.what)
		}
		if got.Tell.Kind != model.ActionSlackTell || got.Tell.ParentKey != got.Click.Key || got.Tell.Key == got.Click.Key {
			t.Errorf("%s: tell %+v", c.name, got.Tell)
		}
	}
}

// TestClickBodies: what each action needs is frozen in its body: the
// answers and the bundle, the permission's request and option, the text
// a message sends, when a snooze ends.
func TestClickBodies(t *testing.T) {
	one := &scan.Detail{Questions: []scan.Question{question("q1", "a")}}
	body := func(kind model.Kind, d *scan.Detail, c model.Click) model.ClickBody {
		c.User = "U0ALICE"
		b, err := model.DecodeClick(Click(clickEpisode(kind), c, clickIn(d)).Click.Body)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if b := body(model.KindUnansweredClarification, one, model.Click{Button: model.ButtonAnswer, Answers: answer("q1", "a")}); b.PendingID != "p1" || len(b.Answers) != 1 {
		t.Errorf("answer body %+v", b)
	}
	perm := &scan.Detail{PermissionRequestID: "r1", PermissionOptions: []scan.PermissionOption{{ID: "o1", Name: "Allow"}}}
	if b := body(model.KindPendingPermission, perm, model.Click{Button: model.ButtonPermission, Value: "o1"}); b.RequestID != "r1" || b.OptionID != "o1" || b.PendingID != "p1" {
		t.Errorf("permission body %+v", b)
	}
	if b := body(model.KindShadowedClarification, one, model.Click{Button: model.ButtonSendMessage, Answers: answer("q1", "a")}); !strings.Contains(b.Text, "label-a") {
		t.Errorf("message body %+v", b)
	}
	if b := body(model.KindStalledTurn, nil, model.Click{Button: model.ButtonCancelAndNudge}); b.Text != "nudge text" {
		t.Errorf("nudge body %+v", b)
	}
	if b := body(model.KindStalledTurn, nil, model.Click{Button: model.ButtonSnooze, Value: "1h"}); !b.Until.Equal(clickNow.Add(time.Hour)) {
		t.Errorf("snooze body %+v", b)
	}
}

// TestClickKeys: the same click delivered twice, or clicked twice, is one
// key; the button and the form giving the same answer are one key; another
// person, another answer or another episode is another.
func TestClickKeys(t *testing.T) {
	two := &scan.Detail{Questions: []scan.Question{question("q1", "a", "b")}}
	key := func(ep string, c model.Click) string {
		e := clickEpisode(model.KindUnansweredClarification)
		e.ID = ep
		return Click(e, c, clickIn(two)).Click.Key
	}
	alice := model.Click{Button: model.ButtonAnswer, Answers: answer("q1", "a"), User: "U0ALICE"}
	same := key("ep1", alice)
	for _, c := range []struct {
		name  string
		ep    string
		click model.Click
		equal bool
	}{
		{"the same click again", "ep1", alice, true},
		{"the form with the same answer", "ep1", model.Click{Button: model.ButtonAnswers, Answers: answer("q1", "a"), User: "U0ALICE"}, true},
		{"another answer", "ep1", model.Click{Button: model.ButtonAnswer, Answers: answer("q1", "b"), User: "U0ALICE"}, false},
		{"another person", "ep1", model.Click{Button: model.ButtonAnswer, Answers: answer("q1", "a"), User: "U0BOB"}, false},
		{"another episode", "ep2", alice, false},
	} {
		if got := key(c.ep, c.click); (got == same) != c.equal || got == "" {
			t.Errorf("%s: key %q vs %q, want equal %v", c.name, got, same, c.equal)
		}
	}
}

// TestClickOnClearedEpisode: an episode that resolved, or whose first
// message never went out, takes no click.
func TestClickOnClearedEpisode(t *testing.T) {
	e := clickEpisode(model.KindStalledTurn)
	e.ResolvedAt, e.Resolution = clickNow, "the turn completed"
	if got := Click(e, model.Click{Button: model.ButtonResolve, User: "U1"}, clickIn(nil)); !strings.Contains(got.Refused, "the turn completed") {
		t.Errorf("resolved: %+v", got)
	}
	in := clickIn(nil)
	in.First = nil
	if got := Click(clickEpisode(model.KindStalledTurn), model.Click{Button: model.ButtonResolve, User: "U1"}, in); got.Refused == "" {
		t.Errorf("no first message: %+v", got)
	}
}

// TestToldAndCleared: a delivered click that acted tells the end on the
// first message (a resolve does not edit it again); a snooze does not, nor
// a click that failed. A silence kept until its finding clears ends when
// no finding of its session and kind is reported.
func TestToldAndCleared(t *testing.T) {
	for _, c := range []struct {
		name string
		a    model.Action
		want bool
	}{
		{"an answer delivered", model.Action{Seq: "click/answer/x/U1", Kind: model.ActionAnswer, State: model.StateDelivered}, true},
		{"an answer that failed", model.Action{Seq: "click/answer/x/U1", Kind: model.ActionAnswer, State: model.StateFailed}, false},
		{"a snooze delivered", model.Action{Seq: "click/snooze/x/U1", Kind: model.ActionSnooze, State: model.StateDelivered}, false},
		{"a step delivered", model.Action{Seq: "step/stalled_turn/0/0", Kind: model.ActionSlack, State: model.StateDelivered}, false},
	} {
		if got := Told(model.Episode{Actions: []model.Action{c.a}}); got != c.want {
			t.Errorf("%s: told %v", c.name, got)
		}
	}
	findings := []scan.Finding{{SessionID: "s1", Kind: model.KindStalledTurn}}
	got := Cleared([]ClearSilence{{ID: "a", SessionID: "s1", Kind: model.KindStalledTurn}, {ID: "b", SessionID: "s1", Kind: model.KindNeverStarted},
		{ID: "c", SessionID: "s2", Kind: model.KindStalledTurn}}, findings)
	if !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("cleared %v, want b c", got)
	}
}

// TestResolveAfterAClick: when an episode whose first message tells a
// click's end resolves, the message is not edited again, and a story not
// yet told is not superseded with the click: the person who clicked is
// still answered. Without a click, the resolve edit is decided as ever.
func TestResolveAfterAClick(t *testing.T) {
	first := model.Action{Key: "first", Seq: "step/stalled_turn/0/0", Kind: model.ActionSlack, Channel: "C1", State: model.StateDelivered,
		ResultChannel: "C1", ResultTS: "1.1"}
	clicked := model.Action{Key: "click", Seq: "click/cancel_and_nudge/x/U1", Kind: model.ActionCancelAndNudge, State: model.StateDelivered}
	tell := model.Action{Key: "tell", Seq: "tell/cancel_and_nudge/x/U1", Kind: model.ActionSlackTell, ParentKey: "click", State: model.StatePending}
	in := Input{Now: clickNow, Routing: &model.Routing{DefaultChannel: "C1"}, Reason: func(model.Episode) model.Reason { return model.Because(model.ClearedTurnCompleted) }}
	for _, c := range []struct {
		name    string
		actions []model.Action
		edit    bool
	}{
		{"no click", []model.Action{first}, true},
		{"a click that acted, its story not told yet", []model.Action{first, clicked, tell}, false},
	} {
		e := clickEpisode(model.KindStalledTurn)
		e.MissingSince, e.Actions = clickNow.Add(-time.Hour), c.actions
		p := Decide(model.Ledger{Open: []model.Episode{e}}, in)
		edit := slices.ContainsFunc(p.Actions, func(a model.Action) bool { return a.Kind == model.ActionSlackUpdate })
		if len(p.Resolve) != 1 || edit != c.edit || slices.Contains(p.Supersede, "tell") {
			t.Errorf("%s: resolve %v, edit %v (want %v), superseded %v", c.name, p.Resolve, edit, c.edit, p.Supersede)
		}
	}
}

// TestUnresolved: a finding a person resolved from Slack (a silence kept
// until it clears covers its session and kind) opens no episode; others
// of that session, or of that kind elsewhere, still do.
func TestUnresolved(t *testing.T) {
	q := func(session string, kind model.Kind) scan.Finding {
		return scan.Finding{SessionID: session, Kind: kind}
	}
	findings := []scan.Finding{q("s1", model.KindUnansweredClarification), q("s1", model.KindStalledTurn), q("s2", model.KindUnansweredClarification)}
	held := []ClearSilence{{ID: "sil", SessionID: "s1", Kind: model.KindUnansweredClarification}}
	got := Unresolved(findings, held)
	want := []scan.Finding{q("s1", model.KindStalledTurn), q("s2", model.KindUnansweredClarification)}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Unresolved = %+v, want %+v", got, want)
	}
	if len(findings) != 3 {
		t.Errorf("the report's findings were changed: %+v", findings)
	}
	if got := Unresolved(findings, nil); len(got) != 3 {
		t.Errorf("no silence: %d findings, want all 3", len(got))
	}
}

// TestOneClickActs: once a click acts on kandev for an episode (saved,
// under way or done), another one that would act — another person, another
// option — is refused, naming who; the same click again is the same
// action; a click that failed leaves the way open; a snooze is not acting.
func TestOneClickActs(t *testing.T) {
	one := &scan.Detail{Questions: []scan.Question{question("q1", "a", "b")}}
	alice := model.Click{Button: model.ButtonAnswer, Answers: answer("q1", "a"), User: "U0ALICE"}
	bob := model.Click{Button: model.ButtonAnswer, Answers: answer("q1", "b"), User: "U0BOB"}
	with := func(state model.State) model.Episode {
		e := clickEpisode(model.KindUnansweredClarification)
		first := Click(e, alice, clickIn(one)).Click
		first.State = state
		e.Actions = []model.Action{first}
		return e
	}
	cases := []struct {
		name    string
		e       model.Episode
		c       model.Click
		refused string
	}{
		{"Bob after Alice's answer was saved", with(model.StatePending), bob, "<@U0ALICE> acted on this alert"},
		{"Bob after it was delivered", with(model.StateDelivered), bob, "<@U0ALICE> acted on this alert"},
		{"Alice's click again: the same action", with(model.StateClaimed), alice, ""},
		{"Bob after Alice's failed", with(model.StateFailed), bob, ""},
		{"a snooze while an answer is under way", with(model.StatePending), model.Click{Button: model.ButtonSnooze, Value: "1h", User: "U0BOB"}, ""},
	}
	for _, c := range cases {
		got := Click(c.e, c.c, clickIn(one))
		if c.refused == "" && got.Refused != "" || c.refused != "" && !strings.Contains(got.Refused, c.refused) {
			t.Errorf("%s: refused %q, want %q", c.name, got.Refused, c.refused)
		}
	}
}

// TestSnoozeAgain: a snooze clicked again once the first went through is
// a new action (it silences again); clicked again before, it is the same.
func TestSnoozeAgain(t *testing.T) {
	e := clickEpisode(model.KindStalledTurn)
	snooze := model.Click{Button: model.ButtonSnooze, Value: "1h", User: "U0BOB"}
	first := Click(e, snooze, clickIn(nil)).Click
	first.State = model.StatePending
	e.Actions = []model.Action{first}
	if again := Click(e, snooze, clickIn(nil)).Click; again.Key != first.Key {
		t.Errorf("redelivered before the snooze went: key %s, want %s", again.Key, first.Key)
	}
	e.Actions[0].State = model.StateDelivered
	if again := Click(e, snooze, clickIn(nil)).Click; again.Key == first.Key || again.Key == "" {
		t.Errorf("clicked again after the snooze went through: the same key %s", again.Key)
	}
}
