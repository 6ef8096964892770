package slack

import (
	"context"
	"fmt"
	"slices"
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

// Form is the modal a multi-question bundle's "Answer…" opens: per
// question a select of its options and an optional text field (kandev
// wants exactly one answer per question: an option or a text). Each
// option's value is its print, and the private metadata holds the button's
// value and each question's print, which the submission carries back
// with the channel and message clicked: an answer goes to the question
// the form showed, with the option the person chose, or not at all.
func Form(f scan.Finding, v ButtonValue, channel, ts string) slackapi.ModalViewRequest {
	var blocks []slackapi.Block
	d := f.Detail
	if d == nil {
		d = &scan.Detail{}
	}
	meta := FormMeta{Value: v, Channel: channel, TS: ts}
	n := min(len(d.Questions), maxFormQuestions)
	for i, q := range d.Questions[:n] {
		sh := formShare(n, len(q.Options))
		meta.Questions = append(meta.Questions, scan.QuestionPrint(q))
		title := buttonText(strings.TrimSpace(q.Title + " " + q.Prompt))
		if sh.options > 0 {
			var opts []*slackapi.OptionBlockObject
			for _, o := range q.Options[:sh.options] {
				opts = append(opts, slackapi.NewOptionBlockObject(scan.OptionPrint(q, o), plainClip(o.Label, sh.label), nil))
			}
			choose := "Choose"
			if sh.options < len(q.Options) {
				choose = fmt.Sprintf("Choose (%d of %d shown)", sh.options, len(q.Options))
			}
			sel := slackapi.NewOptionsSelectBlockElement(slackapi.OptTypeStatic, plain(choose), "choice", opts...)
			in := slackapi.NewInputBlock(fmt.Sprintf("q%d", i), plainClip(title, sh.title), nil, sel)
			in.Optional = true
			blocks = append(blocks, in)
		}
		txt := slackapi.NewPlainTextInputBlockElement(plain("Or write an answer"), "text")
		txt.Multiline, txt.MaxLength = true, sh.typed
		in := slackapi.NewInputBlock(fmt.Sprintf("t%d", i), plainClip("Your own answer: "+title, sh.title), nil, txt)
		in.Optional = true
		blocks = append(blocks, in)
	}
	return slackapi.ModalViewRequest{Type: slackapi.VTModal, CallbackID: FormCallback, PrivateMetadata: meta.Encode(),
		Title: plain("Answer kandev"), Submit: plain("Answer"), Close: plain("Cancel"), Blocks: slackapi.Blocks{BlockSet: blocks}}
}

// share is what one question of a form may hold: how many of its
// options, the characters of each option's label, of each of its two
// labels, and of the answer typed in its text field.
type share struct{ options, label, title, typed int }

// formShare is the share of one of n questions with options options:
// MaxFormText and MaxFormOptions split evenly among the questions, at
// most what Slack takes (100 options, 75 characters a label, 2,000 a
// label or a typed answer). A fifth of the text each for its two labels
// and the typed answer, two fifths for its options' labels, and what
// they leave to the typed answer too. Options past its share are not
// shown (the select says how many are; an answer can still be written).
func formShare(n, options int) share {
	text := MaxFormText / max(n, 1)
	sh := share{title: min(2000, text/5)}
	sh.options = min(options, 100, MaxFormOptions/max(n, 1))
	sh.label = min(75, (text*2/5)/max(sh.options, 1))
	sh.typed = min(2000, text-2*sh.title-sh.options*sh.label)
	return sh
}

// FormMeta is what a form carries from its click to its submission.
type FormMeta struct {
	Value   ButtonValue `json:"v"`
	Channel string      `json:"c"`
	TS      string      `json:"t"`
	// Questions are the prints of the questions the form shows, in its
	// order; nil in a form opened before forms had them (read by place).
	Questions []string `json:"q,omitempty"`
}

// Encode is the form's private metadata (Slack: 3,000 characters; at most
// maxFormQuestions prints of 16 characters).
func (m FormMeta) Encode() string {
	return fmt.Sprintf("%s\n%s\n%s\n%s", m.Channel, m.TS, m.Value.Encode(), strings.Join(m.Questions, ","))
}

// DecodeFormMeta reads a form's private metadata.
func DecodeFormMeta(s string) (FormMeta, error) {
	parts := strings.SplitN(s, "\n", 4)
	if len(parts) < 3 {
		return FormMeta{}, fmt.Errorf("not a watchdogd form")
	}
	v, err := DecodeValue(parts[2])
	m := FormMeta{Value: v, Channel: parts[0], TS: parts[1]}
	if len(parts) == 4 && parts[3] != "" {
		m.Questions = strings.Split(parts[3], ",")
	}
	return m, err
}

// Submitted reads a form's answers from its state, in f, the finding as
// last seen: for each question the form showed (found by its print), the
// option chosen (by its print) or the text written (a text wins: it is
// what the person took the trouble to write), with the prints of the
// options chosen. A question left blank (kandev wants one answer per
// question), or a question or an option f no longer holds, is a problem,
// by the block id of the field that shows it: nothing is answered then,
// and Slack keeps the form open with those fields marked.
func Submitted(f scan.Finding, m FormMeta, state map[string]map[string]slackapi.BlockAction) (as []model.Answer, prints []string, problems map[string]string) {
	d := f.Detail
	if d == nil {
		d = &scan.Detail{}
	}
	problems = map[string]string{}
	for i := range shown(d, m) {
		qb, tb := fmt.Sprintf("q%d", i), fmt.Sprintf("t%d", i)
		q, ok := questionShown(d, m, i)
		if !ok {
			problems[tb] = QuestionChanged + ": close this form and answer again"
			continue
		}
		if t := strings.TrimSpace(state[tb]["text"].Value); t != "" {
			as = append(as, model.Answer{QuestionID: q.ID, Text: t})
			continue
		}
		sel := state[qb]["choice"].SelectedOption.Value
		switch {
		case sel == "" && len(q.Options) > 0:
			problems[qb] = "Choose an option, or write your own answer below"
			continue
		case sel == "":
			problems[tb] = "Write an answer: kandev wants one for each question"
			continue
		}
		j := slices.IndexFunc(q.Options, func(o scan.Option) bool { return scan.OptionPrint(q, o) == sel })
		if j < 0 {
			problems[qb] = QuestionChanged + ": kandev no longer offers this option"
			continue
		}
		as = append(as, model.Answer{QuestionID: q.ID, Options: []string{q.Options[j].ID}})
		prints = append(prints, sel)
	}
	return as, prints, problems
}

// shown is how many questions the form showed.
func shown(d *scan.Detail, m FormMeta) int {
	if m.Questions != nil {
		return min(len(m.Questions), maxFormQuestions)
	}
	return min(len(d.Questions), maxFormQuestions)
}

// questionShown is the question of d the form showed at place i: the one
// with its print (or, in a form without prints, the one at i).
func questionShown(d *scan.Detail, m FormMeta, i int) (scan.Question, bool) {
	if m.Questions == nil {
		return d.Questions[i], true
	}
	j := slices.IndexFunc(d.Questions, func(q scan.Question) bool { return scan.QuestionPrint(q) == m.Questions[i] })
	if j < 0 {
		return scan.Question{}, false
	}
	return d.Questions[j], true
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
