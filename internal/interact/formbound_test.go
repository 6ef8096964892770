package interact_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"

	"github.com/watchdogd/watchdogd/internal/interact"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/slack"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// TestLargestFormSubmissionFitsMaxBody: the submission of the largest
// forms watchdogd renders, as Slack sends it (the whole form back in a
// view_submission payload, every text field filled to its max_length and
// every select chosen, every character at its largest), fits in MaxBody,
// and each form is within slack's form limits MaxBody is derived from. A
// small bundle keeps every option and room to write an answer.
func TestLargestFormSubmissionFitsMaxBody(t *testing.T) {
	for _, c := range []struct{ questions, options int }{{2, 6}, {4, 6}, {4, 100}, {45, 6}, {45, 100}} {
		var qs []scan.Question
		for i := range c.questions {
			q := scan.Question{ID: fmt.Sprint("q", i), Title: widely(model.MaxText), Prompt: widely(model.MaxText)}
			for j := range c.options {
				q.Options = append(q.Options, scan.Option{ID: fmt.Sprint(j), Label: widely(model.MaxOptionText)})
			}
			qs = append(qs, q)
		}
		f := scan.Finding{Kind: model.KindUnansweredClarification, Detail: &scan.Detail{Questions: qs}}
		view := slack.Form(f, slack.ButtonValue{Episode: "0b0e5b9a-6c7e-4d33-9a51-2f1d3c4b5a69", Button: model.ButtonForm}, "C0123ABCDEF", "1767326126.896109")
		name := fmt.Sprintf("%d questions of %d options", c.questions, c.options)
		text, options, typed := formTotals(view)
		if text > slack.MaxFormText || options > slack.MaxFormOptions || len(view.Blocks.BlockSet) > slack.MaxFormBlocks {
			t.Errorf("%s: %d characters, %d options, %d blocks: more than slack.MaxFormText %d, MaxFormOptions %d or MaxFormBlocks %d",
				name, text, options, len(view.Blocks.BlockSet), slack.MaxFormText, slack.MaxFormOptions, slack.MaxFormBlocks)
		}
		if c.questions <= 4 && c.options <= 6 && (options != c.questions*c.options || typed < 300) {
			t.Errorf("%s: %d options shown, answers of %d characters: want every option, and room to write", name, options, typed)
		}
		body := submissionBody(t, view)
		if len(body) > interact.MaxBody {
			t.Errorf("%s: a submission's body of %d bytes, more than MaxBody (%d)", name, len(body), interact.MaxBody)
		}
		t.Logf("%s: %d characters, %d options, answers of %d characters; a submission's body %d bytes (%.0f %% of MaxBody)",
			name, text, options, typed, len(body), 100*float64(len(body))/interact.MaxBody)
	}
}

// formTotals are a form's characters of text (labels, options' labels,
// what its fields take typed), its options, and the most characters one
// field takes typed.
func formTotals(v slackapi.ModalViewRequest) (text, options, typed int) {
	for _, b := range v.Blocks.BlockSet {
		in := b.(*slackapi.InputBlock)
		text += utf8.RuneCountInString(in.Label.Text)
		switch e := in.Element.(type) {
		case *slackapi.SelectBlockElement:
			for _, o := range e.Options {
				options++
				text += utf8.RuneCountInString(o.Text.Text)
			}
		case *slackapi.PlainTextInputBlockElement:
			text += e.MaxLength
			typed = max(typed, e.MaxLength)
		}
	}
	return text, options, typed
}

// submissionBody is the body of Slack's request for view's submission:
// the view as Slack gives it back, its state holding every field filled
// (a text field to its max_length in wide characters, a select's first
// option), in a view_submission payload with what Slack puts around it.
func submissionBody(t *testing.T, view slackapi.ModalViewRequest) string {
	t.Helper()
	raw, err := json.Marshal(view)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	asSlackSays(v)
	values := map[string]any{}
	for _, b := range view.Blocks.BlockSet {
		in := b.(*slackapi.InputBlock)
		switch e := in.Element.(type) {
		case *slackapi.SelectBlockElement:
			values[in.BlockID] = map[string]any{"choice": map[string]any{"type": "static_select", "selected_option": e.Options[0]}}
		case *slackapi.PlainTextInputBlockElement:
			values[in.BlockID] = map[string]any{"text": map[string]any{"type": "plain_text_input", "value": widely(e.MaxLength)}}
		}
	}
	for k, x := range map[string]any{"id": "V0123ABCDEF", "team_id": "T0123ABCDEF", "app_id": "A0123ABCDEF", "bot_id": "B0123ABCDEF",
		"root_view_id": "V0123ABCDEF", "previous_view_id": nil, "external_id": "", "hash": "1767326130.bKLGqTGy", "clear_on_close": false,
		"notify_on_close": false, "app_installed_team_id": "T0123ABCDEF", "state": map[string]any{"values": values}} {
		v[k] = x
	}
	payload := map[string]any{
		"type":       "view_submission",
		"team":       map[string]any{"id": "T0123ABCDEF", "domain": "example-engineering-workspace"},
		"user":       map[string]any{"id": "U0123ABCDEF", "username": "alice.example", "name": "alice.example", "team_id": "T0123ABCDEF"},
		"api_app_id": "A0123ABCDEF", "token": "abcdefghijklmnopqrstuvwx",
		"trigger_id": "10215325802133.3901254001572.2e2548aa918b35fd85829545c2d4ae2b",
		"view":       v, "response_urls": []any{}, "is_enterprise_install": false,
		"enterprise": map[string]any{"id": "E0123ABCDEF", "name": "Example Enterprise"},
	}
	b, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return "payload=" + url.QueryEscape(escapeAll(string(b)))
}
