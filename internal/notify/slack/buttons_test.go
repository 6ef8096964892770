package slack_test

import (
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

// TestButtonClick: a button's value names places, which become kandev's
// ids from the finding; a place the finding lacks is refused.
func TestButtonClick(t *testing.T) {
	f := scan.Finding{Kind: model.KindUnansweredClarification, Detail: &scan.Detail{Questions: []scan.Question{question("1", "pgx", "lib/pq")},
		PermissionOptions: []scan.PermissionOption{{ID: "allow", Name: "Allow"}}}}
	c, err := slack.ButtonValue{Episode: "ep1", Button: model.ButtonAnswer, Option: 1}.Click(f)
	if err != nil || c.Answers[0].QuestionID != "q1" || c.Answers[0].Options[0] != "o-lib/pq" {
		t.Fatalf("answer click %+v %v", c, err)
	}
	c, err = slack.ButtonValue{Episode: "ep1", Button: model.ButtonPermission}.Click(f)
	if err != nil || c.Value != "allow" {
		t.Fatalf("permission click %+v %v", c, err)
	}
	if _, err := (slack.ButtonValue{Episode: "ep1", Button: model.ButtonAnswer, Option: 2}).Click(f); err == nil {
		t.Fatal("an option the finding lacks was taken")
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
// submission back to one answer per question, a text winning.
func TestForm(t *testing.T) {
	f := scan.Finding{Kind: model.KindUnansweredClarification, Detail: &scan.Detail{Questions: []scan.Question{question("1", "a", "b"), question("2", "c")}}}
	v := slack.ButtonValue{Episode: "ep1", Button: model.ButtonForm}
	view := slack.Form(f, v, "C1", "1.2")
	if len(view.Blocks.BlockSet) != 4 {
		t.Fatalf("form blocks %d", len(view.Blocks.BlockSet))
	}
	m, err := slack.DecodeFormMeta(view.PrivateMetadata)
	if err != nil || m.Channel != "C1" || m.TS != "1.2" || m.Value.Episode != "ep1" {
		t.Fatalf("meta %+v %v", m, err)
	}
	state := map[string]map[string]slackapi.BlockAction{
		"q0": {"choice": {SelectedOption: slackapi.OptionBlockObject{Value: "1"}}},
		"q1": {"choice": {SelectedOption: slackapi.OptionBlockObject{Value: "0"}}},
		"t1": {"text": {Value: "my own"}},
	}
	got := slack.Submitted(f, state)
	if len(got) != 2 || got[0].Options[0] != "o-b" || got[1].Text != "my own" || len(got[1].Options) != 0 {
		t.Fatalf("answers %+v", got)
	}
}
