package slack

import (
	"fmt"

	slackapi "github.com/slack-go/slack"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// Posted is the frozen body of the message of episode e that watchdogd
// posted at ts in channel: the message a click came from. ok is false
// when the ledger holds no such post of e.
func Posted(e model.Episode, channel, ts string) (body string, ok bool) {
	for _, a := range e.Actions {
		if a.Kind == model.ActionSlack && a.State == model.StateDelivered && a.ResultTS == ts && a.ResultTS != "" &&
			(channel == "" || a.ResultChannel == channel) {
			return a.Body, true
		}
	}
	return "", false
}

// ErrNotPosted is a click on a button the message watchdogd posted does
// not hold (a forged value, or another message's).
var ErrNotPosted = fmt.Errorf("the button clicked is not on the message watchdogd posted for this alert")

// Chosen reads what a click on a button asks, from the message watchdogd
// posted (posted, its frozen body) rather than from the click: the button
// on it that the click's value names, for the episode that value names
// (a message holding several episodes' buttons is read per episode), and
// the option that button was made for, found in f, the episode's finding
// as last seen, by the option's print. A button posted before buttons
// carried prints stands for the option at its place, as long as the
// button watchdogd renders for that option now shows what the posted one
// showed. An option f no longer offers is an error saying the question
// changed; nothing is decided.
func Chosen(posted string, v ButtonValue, f scan.Finding) (model.Click, error) {
	m, err := DecodeMessage(posted)
	if err != nil {
		return model.Click{}, err
	}
	was, text, ok := buttonOn(m, v)
	if !ok {
		return model.Click{}, ErrNotPosted
	}
	c := model.Click{EpisodeID: was.Episode, Button: was.Button, Value: was.Value}
	d := f.Detail
	if d == nil {
		d = &scan.Detail{}
	}
	switch was.Button {
	case model.ButtonAnswer, model.ButtonSendMessage:
		q, o, ok := f.OptionAt(was.Print)
		if was.Print == "" {
			q, o, ok = was.Question, was.Option, sameButton(f, was, text)
		}
		if !ok {
			return model.Click{}, changed(text)
		}
		qu := d.Questions[q]
		c.Answers = []model.Answer{{QuestionID: qu.ID, Options: []string{qu.Options[o].ID}}}
		c.Prints = []string{scan.OptionPrint(qu, qu.Options[o])}
	case model.ButtonPermission:
		o, ok := f.PermissionAt(was.Print)
		if was.Print == "" {
			o, ok = was.Option, sameButton(f, was, text)
		}
		if !ok {
			return model.Click{}, changed(text)
		}
		c.Value = d.PermissionOptions[o].ID
		c.Prints = []string{scan.PermissionPrint(d.PermissionRequestID, d.PermissionOptions[o])}
	}
	return c, nil
}

// QuestionChanged starts what a person is told when the option they chose
// is no longer kandev's: nothing was sent.
const QuestionChanged = "the question changed in kandev since this message was posted"

func changed(label string) error {
	return fmt.Errorf("%s: it no longer offers “%s”, so nothing was sent; answer in kandev", QuestionChanged, label)
}

// buttonOn is the button of m that v names, and its text.
func buttonOn(m Message, v ButtonValue) (ButtonValue, string, bool) {
	for _, b := range m.Blocks.BlockSet {
		a, ok := b.(*slackapi.ActionBlock)
		if !ok || a.Elements == nil {
			continue
		}
		for _, e := range a.Elements.ElementSet {
			btn, ok := e.(*slackapi.ButtonBlockElement)
			if !ok || btn.URL != "" {
				continue
			}
			w, err := DecodeValue(btn.Value)
			if err != nil || !w.names(v) {
				continue
			}
			text := ""
			if btn.Text != nil {
				text = btn.Text.Text
			}
			return w, text, true
		}
	}
	return ButtonValue{}, "", false
}

// sameButton says whether the button watchdogd renders now, from f, at
// the place was names has the text a button posted there showed.
func sameButton(f scan.Finding, was ButtonValue, text string) bool {
	switch was.Button { // the kind the button is rendered for: policy says what else changed
	case model.ButtonAnswer:
		f.Kind = model.KindUnansweredClarification
	case model.ButtonSendMessage:
		f.Kind = model.KindShadowedClarification
	case model.ButtonPermission:
		f.Kind = model.KindPendingPermission
	}
	now, shows, ok := buttonOn(Message{Blocks: slackapi.Blocks{BlockSet: Buttons(f, was.Episode)}}, was)
	return ok && now.names(was) && shows == text
}
