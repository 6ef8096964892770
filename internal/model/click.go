package model

import (
	"encoding/json"
	"time"
)

// The buttons watchdogd puts on its Slack messages: what a Click names.
const (
	// ButtonAnswer answers a one-question bundle with the option Value.
	ButtonAnswer = "answer"
	// ButtonForm opens a form with one select per question (and a text
	// field); its submission is a ButtonAnswers click. It decides nothing.
	ButtonForm = "form"
	// ButtonAnswers is a form's submission: Click.Answers.
	ButtonAnswers = "answers"
	// ButtonPermission answers a permission with kandev's option Value.
	ButtonPermission = "permission"
	// ButtonSendMessage sends the option Value of a question kandev hides
	// as a user message.
	ButtonSendMessage = "send_message"
	// ButtonCancelAndNudge cancels a stalled turn and nudges the agent.
	ButtonCancelAndNudge = "cancel_and_nudge"
	// ButtonSnooze silences the session and kind for Value (1h or 4h).
	ButtonSnooze = "snooze"
	// ButtonResolve resolves the episode, silenced until the finding clears.
	ButtonResolve = "resolve"
)

// Click is one click on a watchdogd message in Slack (or one form
// submitted), as the receiving side read it. Everything in it came from
// Slack's request, whose signature or connection says Slack sent it; its
// values came from watchdogd's own message and are checked against the
// episode all the same.
type Click struct {
	EpisodeID string
	Button    string
	Value     string
	// Answers are a form's, one per question.
	Answers []Answer
	// Prints name the options chosen (scan.OptionPrint,
	// scan.PermissionPrint), as the message or form clicked showed them:
	// delivery sends nothing once kandev no longer offers one of them.
	Prints []string
	// User is the Slack user id of who clicked.
	User string
	// Channel and MessageTS are the message clicked (a form's: the message
	// whose button opened it).
	Channel   string
	MessageTS string
	// TriggerID opens a form (Slack honours it for 3 seconds).
	TriggerID string
}

// Answer is one question's answer, as kandev's respond takes it.
type Answer struct {
	QuestionID string   `json:"question_id"`
	Options    []string `json:"selected_options,omitempty"`
	Text       string   `json:"custom_text,omitempty"`
}

// ClickBody is a click action's frozen body: what it does and who asked.
// Text is the message a send_message or cancel_and_nudge sends (the nudge
// outlet reads the body's text member).
type ClickBody struct {
	Button string `json:"button"`
	User   string `json:"user"`
	// What says what was chosen, for people: an option's label, a
	// permission option's name, "1h".
	What      string   `json:"what,omitempty"`
	Text      string   `json:"text,omitempty"`
	PendingID string   `json:"pending_id,omitempty"`
	Answers   []Answer `json:"answers,omitempty"`
	// Prints are the click's (Click.Prints): each option chosen must
	// still be offered when the click is delivered.
	Prints []string `json:"prints,omitempty"`
	// RequestID and OptionID answer a permission; OptionKind is kandev's
	// kind of that option (allow_once, reject_always…), its story's verb.
	RequestID  string `json:"request_id,omitempty"`
	OptionID   string `json:"option_id,omitempty"`
	OptionKind string `json:"option_kind,omitempty"`
	// Until ends a snooze.
	Until time.Time `json:"until,omitzero"`
	// Channel and TS are the message the click's story is told on.
	Channel string `json:"channel"`
	TS      string `json:"ts"`
}

// Encode is the body stored in the action row.
func (b ClickBody) Encode() string {
	out, err := json.Marshal(b)
	if err != nil {
		return "{}" // strings, a list of strings and a time always marshal
	}
	return string(out)
}

// DecodeClick reads a click action's body.
func DecodeClick(body string) (ClickBody, error) {
	var b ClickBody
	err := json.Unmarshal([]byte(body), &b)
	return b, err
}
