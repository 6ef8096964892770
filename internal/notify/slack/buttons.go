package slack

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// ButtonValue is what a button (or a form) carries back to watchdogd:
// the episode, the button, the question and option by their place in the
// finding the message was rendered from and by their print (the option a
// button stands for, see scan.OptionPrint), or a value (a snooze's
// length). Places and prints keep the value small whatever kandev's ids
// are (agent-written, and Slack bounds a value to 2,000 characters).
//
// A click is read from the button as watchdogd posted it (Chosen), and the
// option is found by its print: a value is a name for a button, never
// trusted for what it asks.
type ButtonValue struct {
	Episode string `json:"e"`
	Button  string `json:"b"`
	// Question and Option are indexes into the finding's questions and
	// their options, or into its permission's options.
	Question int    `json:"q,omitempty"`
	Option   int    `json:"o,omitempty"`
	Value    string `json:"v,omitempty"`
	// Print is the print of the option the button stands for; empty on
	// the other buttons, and on buttons posted before buttons had one.
	Print string `json:"h,omitempty"`
}

// names says whether v and w name the same button (their prints aside).
func (v ButtonValue) names(w ButtonValue) bool {
	return v.Episode == w.Episode && v.Button == w.Button && v.Question == w.Question && v.Option == w.Option && v.Value == w.Value
}

// Encode is the button's value.
func (v ButtonValue) Encode() string {
	b, _ := json.Marshal(v) // strings and ints
	return string(b)
}

// DecodeValue reads a button's value; anything else is an error.
func DecodeValue(s string) (ButtonValue, error) {
	var v ButtonValue
	if len(s) > 2000 || json.Unmarshal([]byte(s), &v) != nil || v.Episode == "" || v.Button == "" {
		return ButtonValue{}, fmt.Errorf("not a watchdogd button")
	}
	return v, nil
}

// ActionPrefix starts the action_id of every watchdogd button.
const ActionPrefix = "watchdogd:"

// maxButtons is the most elements of one actions block (Slack's limit is
// 25); one is kept for the link to kandev.
const maxButtons = 24

// Buttons are the actions blocks a first message about finding f of
// episode carries, decided from the finding alone:
//
//   - a question of one bundle question with options: a button per
//     option, and a link to answer in kandev;
//   - a bundle of several questions, or one without options (free text):
//     a button opening a form with a select per question and a text field;
//   - a question kandev hides (it refuses its answer): a "Send as message"
//     button per option, the remedy the message recommends;
//   - a permission: a button per option kandev offers, named as kandev
//     names it;
//   - a turn that runs without progress: "Cancel turn and nudge";
//   - every message: "Snooze 1h", "Snooze 4h" and "Resolve".
func Buttons(f scan.Finding, episode string) []slackapi.Block {
	d := f.Detail
	if d == nil {
		d = &scan.Detail{}
	}
	btn := func(text, button string, q, o int, v string) *slackapi.ButtonBlockElement {
		val := ButtonValue{Episode: episode, Button: button, Question: q, Option: o, Value: v}
		switch button {
		case model.ButtonAnswer, model.ButtonSendMessage:
			val.Print = scan.OptionPrint(d.Questions[q], d.Questions[q].Options[o])
		case model.ButtonPermission:
			val.Print = scan.PermissionPrint(d.PermissionRequestID, d.PermissionOptions[o])
		}
		id := fmt.Sprintf("%s%s:%d:%d:%s", ActionPrefix, button, q, o, v)
		return slackapi.NewButtonBlockElement(id, val.Encode(), slackapi.NewTextBlockObject(slackapi.PlainTextType, buttonText(text), false, false))
	}
	var act []slackapi.BlockElement
	one := len(d.Questions) == 1 && len(d.Questions[0].Options) > 0 && len(d.Questions[0].Options) <= maxButtons
	switch f.Kind {
	case model.KindUnansweredClarification:
		if one {
			for i, o := range d.Questions[0].Options {
				act = append(act, btn(o.Label, model.ButtonAnswer, 0, i, ""))
			}
		} else if len(d.Questions) > 0 {
			act = append(act, btn("Answer…", model.ButtonForm, 0, 0, ""))
		}
	case model.KindShadowedClarification:
		if one {
			for i, o := range d.Questions[0].Options {
				act = append(act, btn("Send “"+o.Label+"” as message", model.ButtonSendMessage, 0, i, ""))
			}
		}
	case model.KindPendingPermission:
		if d.PermissionRequestID != "" && len(d.PermissionOptions) <= maxButtons {
			for i, o := range d.PermissionOptions {
				b := btn(o.Name, model.ButtonPermission, 0, i, "")
				b.Style = permissionStyle(o.Kind)
				act = append(act, b)
			}
		}
	}
	if policy.CancelAllowed(f.Kind) {
		b := btn("Cancel turn and nudge", model.ButtonCancelAndNudge, 0, 0, "")
		b.Confirm = slackapi.NewConfirmationBlockObject(plain("Cancel the turn?"),
			plain("kandev cancels the running turn, then watchdogd asks the agent to continue."), plain("Cancel turn and nudge"), plain("Keep it"))
		act = append(act, b)
	}
	if f.Kind.Question() && f.Link != "" {
		link := slackapi.NewButtonBlockElement(ActionPrefix+"link", "", plain("Answer in kandev"))
		link.URL = f.Link
		act = append(act, link)
	}
	var blocks []slackapi.Block
	if len(act) > 0 {
		blocks = append(blocks, slackapi.NewActionBlock("watchdogd-act", act...))
	}
	return append(blocks, slackapi.NewActionBlock("watchdogd-manage",
		btn("Snooze 1h", model.ButtonSnooze, 0, 0, "1h"), btn("Snooze 4h", model.ButtonSnooze, 0, 0, "4h"),
		btn("Resolve", model.ButtonResolve, 0, 0, "")))
}

// buttonText fits a button's text (Slack: 75 characters, not empty).
func buttonText(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		s = "(no label)"
	}
	return clip(s, 75)
}

// permissionStyle colours kandev's allow options green, its rejects red.
func permissionStyle(kind string) slackapi.Style {
	switch {
	case strings.HasPrefix(kind, "allow"):
		return slackapi.StylePrimary
	case strings.HasPrefix(kind, "reject"):
		return slackapi.StyleDanger
	}
	return slackapi.StyleDefault
}

// withoutButtons is a message's blocks without its actions blocks: a
// message that says how it ended offers nothing more to click.
func withoutButtons(blocks []slackapi.Block) []slackapi.Block {
	out := make([]slackapi.Block, 0, len(blocks))
	for _, b := range blocks {
		if b.BlockType() != slackapi.MBTAction {
			out = append(out, b)
		}
	}
	return out
}

// buttonsText counts the characters of the buttons' texts: Slack counts
// them against a message's text.
func buttonsText(blocks []slackapi.Block) int {
	n := 0
	for _, b := range blocks {
		if a, ok := b.(*slackapi.ActionBlock); ok {
			for _, e := range a.Elements.ElementSet {
				if btn, ok := e.(*slackapi.ButtonBlockElement); ok && btn.Text != nil {
					n += utf8.RuneCountInString(btn.Text.Text)
				}
			}
		}
	}
	return n
}
