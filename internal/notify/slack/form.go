package slack

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// FormCallback is the callback_id of watchdogd's answer form.
const FormCallback = "watchdogd:answers"

// maxFormQuestions bounds a form: a modal holds at most 100 blocks, and
// each question takes a select and a text field.
const maxFormQuestions = 45

// Click reads what a button of episode's message asks, from its value
// and the finding the message was about: the places in the value become
// kandev's question and option ids. A place the finding does not hold is
// an error (the message is older than the finding, or was forged).
func (v ButtonValue) Click(f scan.Finding) (model.Click, error) {
	c := model.Click{EpisodeID: v.Episode, Button: v.Button, Value: v.Value}
	d := f.Detail
	if d == nil {
		d = &scan.Detail{}
	}
	switch v.Button {
	case model.ButtonAnswer, model.ButtonSendMessage:
		if v.Question < 0 || v.Question >= len(d.Questions) || v.Option < 0 || v.Option >= len(d.Questions[v.Question].Options) {
			return model.Click{}, fmt.Errorf("the question or option clicked is not kandev's any more")
		}
		q := d.Questions[v.Question]
		c.Answers = []model.Answer{{QuestionID: q.ID, Options: []string{q.Options[v.Option].ID}}}
	case model.ButtonPermission:
		if v.Option < 0 || v.Option >= len(d.PermissionOptions) {
			return model.Click{}, fmt.Errorf("the permission option clicked is not kandev's any more")
		}
		c.Value = d.PermissionOptions[v.Option].ID
	}
	return c, nil
}

// Form is the modal a multi-question bundle's "Answer…" opens: per
// question a select of its options and an optional text field (kandev
// wants exactly one answer per question: an option or a text). Its
// private metadata is the button's value, which the submission carries
// back with the channel and message clicked.
func Form(f scan.Finding, v ButtonValue, channel, ts string) slackapi.ModalViewRequest {
	var blocks []slackapi.Block
	d := f.Detail
	if d == nil {
		d = &scan.Detail{}
	}
	for i, q := range d.Questions {
		if i >= maxFormQuestions {
			break
		}
		title := buttonText(strings.TrimSpace(q.Title + " " + q.Prompt))
		if len(q.Options) > 0 {
			var opts []*slackapi.OptionBlockObject
			for j, o := range q.Options {
				if j >= 100 {
					break
				}
				opts = append(opts, slackapi.NewOptionBlockObject(strconv.Itoa(j), plainClip(o.Label, 75), nil))
			}
			sel := slackapi.NewOptionsSelectBlockElement(slackapi.OptTypeStatic, plain("Choose"), "choice", opts...)
			in := slackapi.NewInputBlock(fmt.Sprintf("q%d", i), plainClip(title, 2000), nil, sel)
			in.Optional = true
			blocks = append(blocks, in)
		}
		txt := slackapi.NewPlainTextInputBlockElement(plain("Or write an answer"), "text")
		txt.Multiline, txt.MaxLength = true, 2000
		in := slackapi.NewInputBlock(fmt.Sprintf("t%d", i), plainClip("Your own answer: "+title, 2000), nil, txt)
		in.Optional = true
		blocks = append(blocks, in)
	}
	meta := FormMeta{Value: v, Channel: channel, TS: ts}
	return slackapi.ModalViewRequest{Type: slackapi.VTModal, CallbackID: FormCallback, PrivateMetadata: meta.Encode(),
		Title: plain("Answer kandev"), Submit: plain("Answer"), Close: plain("Cancel"), Blocks: slackapi.Blocks{BlockSet: blocks}}
}

// FormMeta is what a form carries from its click to its submission.
type FormMeta struct {
	Value   ButtonValue `json:"v"`
	Channel string      `json:"c"`
	TS      string      `json:"t"`
}

// Encode is the form's private metadata (Slack: 3,000 characters).
func (m FormMeta) Encode() string {
	return fmt.Sprintf("%s\n%s\n%s", m.Channel, m.TS, m.Value.Encode())
}

// DecodeFormMeta reads a form's private metadata.
func DecodeFormMeta(s string) (FormMeta, error) {
	parts := strings.SplitN(s, "\n", 3)
	if len(parts) != 3 {
		return FormMeta{}, fmt.Errorf("not a watchdogd form")
	}
	v, err := DecodeValue(parts[2])
	return FormMeta{Value: v, Channel: parts[0], TS: parts[1]}, err
}

// Submitted reads a form's answers from its state: per question the
// option chosen, or the text written (a text wins: it is what the person
// took the trouble to write). A question left blank is left out, and
// policy refuses the click, saying kandev wants one answer per question.
func Submitted(f scan.Finding, state map[string]map[string]slackapi.BlockAction) []model.Answer {
	d := f.Detail
	if d == nil {
		return nil
	}
	var out []model.Answer
	for i, q := range d.Questions {
		if i >= maxFormQuestions {
			break
		}
		if t := strings.TrimSpace(state[fmt.Sprintf("t%d", i)]["text"].Value); t != "" {
			out = append(out, model.Answer{QuestionID: q.ID, Text: t})
			continue
		}
		sel := state[fmt.Sprintf("q%d", i)]["choice"].SelectedOption.Value
		if j, err := strconv.Atoi(sel); err == nil && j >= 0 && j < len(q.Options) {
			out = append(out, model.Answer{QuestionID: q.ID, Options: []string{q.Options[j].ID}})
		}
	}
	return out
}

func plainClip(s string, n int) *slackapi.TextBlockObject {
	return slackapi.NewTextBlockObject(slackapi.PlainTextType, clip(s, n), false, false)
}

// OpenForm opens a form for the person who clicked (views.open), within
// the 3 seconds Slack honours a trigger for.
func (s *Client) OpenForm(ctx context.Context, triggerID string, view slackapi.ModalViewRequest) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := s.client.OpenViewContext(ctx, triggerID, view); err != nil {
		return fmt.Errorf("views.open: %w", err)
	}
	return nil
}
