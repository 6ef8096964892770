package slack_test

import (
	"errors"
	"strings"
	"testing"

	slackapi "github.com/slack-go/slack"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/slack"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// buttonsOf lists the buttons of blocks by their watchdogd name ("answer",
// "link", …), in order.
func buttonsOf(t *testing.T, blocks []slackapi.Block) []string {
	t.Helper()
	var out []string
	for _, b := range blocks {
		a, ok := b.(*slackapi.ActionBlock)
		if !ok {
			continue
		}
		for _, e := range a.Elements.ElementSet {
			btn := e.(*slackapi.ButtonBlockElement)
			if btn.URL != "" {
				out = append(out, "link")
				continue
			}
			v, err := slack.DecodeValue(btn.Value)
			if err != nil || v.Episode != "ep1" || !strings.HasPrefix(btn.ActionID, slack.ActionPrefix) {
				t.Fatalf("button %q value %q: %v", btn.ActionID, btn.Value, err)
			}
			out = append(out, v.Button)
		}
	}
	return out
}

func question(opts ...string) scan.Question {
	q := scan.Question{ID: "q" + opts[0], Title: "Which driver?"}
	for _, o := range opts[1:] {
		q.Options = append(q.Options, scan.Option{ID: "o-" + o, Label: o})
	}
	return q
}

// TestButtons: each kind of message offers the buttons that act on it,
// and every message snooze and resolve.
func TestButtons(t *testing.T) {
	manage := []string{"snooze", "snooze", "resolve"}
	cases := []struct {
		name string
		f    scan.Finding
		want []string
	}{
		// One question with options: a button per option and the link.
		{"one question", scan.Finding{Kind: model.KindUnansweredClarification, Link: "http://k/t",
			Detail: &scan.Detail{Questions: []scan.Question{question("1", "pgx", "lib/pq")}}}, []string{"answer", "answer", "link"}},
		// Two questions: one button opening the form.
		{"bundle", scan.Finding{Kind: model.KindUnansweredClarification, Link: "http://k/t",
			Detail: &scan.Detail{Questions: []scan.Question{question("1", "a"), question("2", "b")}}}, []string{"form", "link"}},
		// A free-text question: the form too.
		{"free text", scan.Finding{Kind: model.KindUnansweredClarification,
			Detail: &scan.Detail{Questions: []scan.Question{{ID: "q1", Title: "Why?"}}}}, []string{"form"}},
		// A question kandev hides: no answer, "send as message" instead.
		{"shadowed", scan.Finding{Kind: model.KindShadowedClarification, Link: "http://k/t",
			Detail: &scan.Detail{Questions: []scan.Question{question("1", "pgx", "lib/pq")}}}, []string{"send_message", "send_message", "link"}},
		// A permission: kandev's options.
		{"permission", scan.Finding{Kind: model.KindPendingPermission, Detail: &scan.Detail{PermissionRequestID: "r1",
			PermissionOptions: []scan.PermissionOption{{ID: "a", Name: "Allow once", Kind: "allow_once"}, {ID: "r", Name: "Reject", Kind: "reject_once"}}}},
			[]string{"permission", "permission"}},
		// A permission without its request id cannot be answered.
		{"permission without request", scan.Finding{Kind: model.KindPendingPermission, Detail: &scan.Detail{
			PermissionOptions: []scan.PermissionOption{{ID: "a", Name: "Allow once"}}}}, nil},
		// A stalled turn: cancel and nudge.
		{"stalled", scan.Finding{Kind: model.KindStalledTurn}, []string{"cancel_and_nudge"}},
		// An interrupted session: only snooze and resolve.
		{"interrupted", scan.Finding{Kind: model.KindInterruptedSession}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := buttonsOf(t, slack.Buttons(c.f, "ep1"))
			want := append(append([]string{}, c.want...), manage...)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("buttons %v, want %v", got, want)
			}
		})
	}
}

// posted is the frozen body of a first post about f of episode ep1.
func posted(f scan.Finding) string {
	return slack.Render(f, slack.RenderOptions{Buttons: true, Episode: "ep1"}).Encode()
}

// valueOf is the value of the button of body whose text is text.
func valueOf(t *testing.T, body, text string) slack.ButtonValue {
	t.Helper()
	m, err := slack.DecodeMessage(body)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range m.Blocks.BlockSet {
		if a, ok := b.(*slackapi.ActionBlock); ok {
			for _, e := range a.Elements.ElementSet {
				if btn := e.(*slackapi.ButtonBlockElement); btn.Text.Text == text {
					v, err := slack.DecodeValue(btn.Value)
					if err != nil {
						t.Fatal(err)
					}
					return v
				}
			}
		}
	}
	t.Fatalf("no button %q", text)
	return slack.ButtonValue{}
}

// TestChosen: a click is read from the button as watchdogd posted it, and
// its option found by its print in the finding as last seen: wherever
// that option now sits, or nowhere, when kandev changed the question.
func TestChosen(t *testing.T) {
	ask := func(q scan.Question) scan.Finding {
		return scan.Finding{Kind: model.KindUnansweredClarification, Detail: &scan.Detail{Questions: []scan.Question{q}}}
	}
	perm := func(opts ...scan.PermissionOption) scan.Finding {
		return scan.Finding{Kind: model.KindPendingPermission, Detail: &scan.Detail{PermissionRequestID: "r1", PermissionOptions: opts}}
	}
	allow, reject := scan.PermissionOption{ID: "allow", Name: "Allow once", Kind: "allow_once"}, scan.PermissionOption{ID: "reject", Name: "Reject", Kind: "reject_once"}
	// legacy is a body as posted before buttons carried prints.
	legacy := func(body string) string { return strings.ReplaceAll(body, `\"h\":`, `\"x\":`) }
	drop := question("1", "pgx", "DROP the database")
	cases := []struct {
		name         string
		posted       string
		click        string // the text of the button clicked
		now          scan.Finding
		answer, perm string // the option sent
		err          string
	}{
		// Unchanged: the option at its place.
		{"same", posted(ask(question("1", "pgx", "lib/pq"))), "lib/pq", ask(question("1", "pgx", "lib/pq")), "o-lib/pq", "", ""},
		// Reordered: the option clicked, found where it is now.
		{"moved", posted(ask(question("1", "pgx", "lib/pq"))), "lib/pq", ask(question("1", "lib/pq", "pgx")), "o-lib/pq", "", ""},
		// Replaced at its place: nothing, and the person is told.
		{"changed", posted(ask(question("1", "pgx", "lib/pq"))), "lib/pq", ask(drop), "", "", "it no longer offers “lib/pq”"},
		// The same label under another id is another option.
		{"another id", posted(ask(question("1", "pgx", "lib/pq"))), "pgx",
			ask(scan.Question{ID: "q1", Options: []scan.Option{{ID: "drop", Label: "pgx"}}}), "", "", "the question changed in kandev"},
		// A permission: by print too; an option renamed is not the one chosen.
		{"permission", posted(perm(allow, reject)), "Reject", perm(reject, allow), "", "reject", ""},
		{"permission renamed", posted(perm(allow, reject)), "Allow once", perm(scan.PermissionOption{ID: "allow", Name: "Allow always", Kind: "allow_always"}, reject),
			"", "", "no longer offers “Allow once”"},
		// A message posted before prints: the option at its place while its
		// button would show the same text.
		{"legacy same", legacy(posted(ask(question("1", "pgx", "lib/pq")))), "lib/pq", ask(question("1", "pgx", "lib/pq")), "o-lib/pq", "", ""},
		{"legacy changed", legacy(posted(ask(question("1", "pgx", "lib/pq")))), "lib/pq", ask(drop), "", "", "no longer offers “lib/pq”"},
		{"legacy permission", legacy(posted(perm(allow, reject))), "Reject", perm(allow, reject), "", "reject", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := slack.Chosen(c.posted, valueOf(t, c.posted, c.click), c.now)
			switch {
			case c.err != "":
				if err == nil || !strings.Contains(err.Error(), c.err) || len(got.Answers)+len(got.Value) != 0 {
					t.Fatalf("got %+v, %v; want %q", got, err, c.err)
				}
			case err != nil:
				t.Fatal(err)
			case c.answer != "" && (len(got.Answers) != 1 || got.Answers[0].QuestionID != "q1" || got.Answers[0].Options[0] != c.answer):
				t.Fatalf("answers %+v, want %s", got.Answers, c.answer)
			case c.perm != "" && got.Value != c.perm:
				t.Fatalf("permission option %q, want %s", got.Value, c.perm)
			case len(got.Prints) != 1 || !c.now.Offers(got.Prints):
				t.Fatalf("prints %v", got.Prints)
			}
		})
	}
}

// TestChosenReadsThePost: what a click's value says beyond naming a
// button is not taken: a print it carries is the posted button's or
// nothing, and a value no posted button has is refused.
func TestChosenReadsThePost(t *testing.T) {
	f := scan.Finding{Kind: model.KindUnansweredClarification, Detail: &scan.Detail{Questions: []scan.Question{question("1", "pgx", "lib/pq")}}}
	body := posted(f)
	v := valueOf(t, body, "pgx")
	v.Print = valueOf(t, body, "lib/pq").Print // forged: pgx's place, lib/pq's print
	if c, err := slack.Chosen(body, v, f); err != nil || c.Answers[0].Options[0] != "o-pgx" {
		t.Fatalf("forged print: %+v %v", c, err)
	}
	v.Option = 7
	if _, err := slack.Chosen(body, v, f); !errors.Is(err, slack.ErrNotPosted) {
		t.Fatalf("a button the post lacks: %v", err)
	}
	if _, err := slack.DecodeValue(`{"e":"ep1"}`); err == nil {
		t.Fatal("a value without a button was taken")
	}
}

// TestRenderWithButtons: a first post carries its buttons; a reply, a
// resolve edit and an answered message carry none; a snooze keeps them.
func TestRenderWithButtons(t *testing.T) {
	f := scan.Finding{Kind: model.KindStalledTurn, SessionID: "s1", TaskTitle: "t", Link: "http://k/t"}
	first := slack.Render(f, slack.RenderOptions{Buttons: true, Episode: "ep1"})
	if n := len(buttonsOf(t, first.Blocks.BlockSet)); n != 4 {
		t.Fatalf("first post has %d buttons", n)
	}
	if n := len(buttonsOf(t, slack.Render(f, slack.RenderOptions{Buttons: true, Episode: "ep1", Reply: true}).Blocks.BlockSet)); n != 0 {
		t.Fatalf("a reply has %d buttons", n)
	}
	if n := len(buttonsOf(t, slack.RenderResolved(first, "it moved", 0).Blocks.BlockSet)); n != 0 {
		t.Fatalf("a resolved message has %d buttons", n)
	}
	told := slack.Told(first, slack.Story(model.ActionAnswer, model.ClickBody{User: "U1", What: "pgx"}), false)
	line := told.Blocks.BlockSet[0].(*slackapi.SectionBlock).Text.Text
	if n := len(buttonsOf(t, told.Blocks.BlockSet)); n != 0 || !strings.Contains(line, "Answered by <@U1> from Slack:* *pgx*") {
		t.Fatalf("answered message: %d buttons, %s", n, line)
	}
	if n := len(buttonsOf(t, slack.Told(first, "snoozed", true).Blocks.BlockSet)); n != 4 {
		t.Fatalf("a snoozed message has %d buttons", n)
	}
}

// TestForm: the form has a select and a text per question, and reads a
// submission back to one answer per question, a text winning, each to the
// question the form showed and with the option chosen, wherever they are
// now; a question or option kandev no longer has is a problem of its
// field, answering nothing.
func TestForm(t *testing.T) {
	f := scan.Finding{Kind: model.KindUnansweredClarification, Detail: &scan.Detail{Questions: []scan.Question{question("1", "a", "b"), question("2", "c")}}}
	v := slack.ButtonValue{Episode: "ep1", Button: model.ButtonForm}
	view := slack.Form(f, v, "C1", "1.2")
	if len(view.Blocks.BlockSet) != 4 {
		t.Fatalf("form blocks %d", len(view.Blocks.BlockSet))
	}
	m, err := slack.DecodeFormMeta(view.PrivateMetadata)
	if err != nil || m.Channel != "C1" || m.TS != "1.2" || m.Value.Episode != "ep1" || len(m.Questions) != 2 {
		t.Fatalf("meta %+v %v", m, err)
	}
	sel := view.Blocks.BlockSet[0].(*slackapi.InputBlock).Element.(*slackapi.SelectBlockElement)
	b := sel.Options[1].Value // the value of option "b"
	state := map[string]map[string]slackapi.BlockAction{
		"q0": {"choice": {SelectedOption: slackapi.OptionBlockObject{Value: b}}},
		"t1": {"text": {Value: "my own"}},
	}
	got, prints, problems := slack.Submitted(f, m, state)
	if len(got) != 2 || got[0].Options[0] != "o-b" || got[1].Text != "my own" || len(got[1].Options) != 0 || len(prints) != 1 || len(problems) != 0 {
		t.Fatalf("answers %+v, prints %v, problems %v", got, prints, problems)
	}
	// kandev put the questions the other way round: each answer still goes
	// to the question it was written for.
	swapped := scan.Finding{Kind: f.Kind, Detail: &scan.Detail{Questions: []scan.Question{question("2", "c"), question("1", "a", "b")}}}
	got, _, problems = slack.Submitted(swapped, m, state)
	if len(got) != 2 || got[0].QuestionID != "q1" || got[0].Options[0] != "o-b" || got[1].QuestionID != "q2" || len(problems) != 0 {
		t.Fatalf("answers to the swapped bundle %+v, %v", got, problems)
	}
	// Option "b" replaced: nothing is answered, the select says why.
	changed := scan.Finding{Kind: f.Kind, Detail: &scan.Detail{Questions: []scan.Question{question("1", "a", "drop"), question("2", "c")}}}
	if _, _, problems := slack.Submitted(changed, m, state); !strings.Contains(problems["q0"], "no longer offers this option") || len(problems) != 1 {
		t.Fatalf("problems %v", problems)
	}
	// Question 2 gone: its field says so.
	gone := scan.Finding{Kind: f.Kind, Detail: &scan.Detail{Questions: []scan.Question{question("1", "a", "b")}}}
	if _, _, problems := slack.Submitted(gone, m, state); !strings.Contains(problems["t1"], slack.QuestionChanged) {
		t.Fatalf("problems %v", problems)
	}
}

// TestPermissionStory: a granted permission's edit says what was done, by
// the kind of the option kandev offered, not the option's name as a verb.
func TestPermissionStory(t *testing.T) {
	for _, c := range []struct {
		b    model.ClickBody
		want string
	}{
		{model.ClickBody{User: "U1", What: "Allow", OptionKind: "allow_once"}, ":key: *Allowed (allow once) by <@U1> from Slack*"},
		{model.ClickBody{User: "U1", What: "Never", OptionKind: "reject_always"}, ":key: *Rejected (reject always) by <@U1> from Slack*"},
		{model.ClickBody{User: "U1", What: "Skip *it*"}, ":key: *Answered “Skip \u200b*it\u200b*” by <@U1> from Slack*"},
	} {
		if got := slack.Story(model.ActionPermission, c.b); got != c.want {
			t.Errorf("%+v: %q, want %q", c.b, got, c.want)
		}
	}
}
