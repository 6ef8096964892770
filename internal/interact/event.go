package interact

import (
	"encoding/json"
	"fmt"
	"strings"

	slackapi "github.com/slack-go/slack"

	"github.com/watchdogd/watchdogd/internal/notify/slack"
)

// Event is what a click or a form submission asks of watchdogd.
type Event struct {
	// Value is the watchdogd button's value (a form's: the button that
	// opened it).
	Value slack.ButtonValue
	// User is who clicked; Channel and TS the message clicked.
	User, Channel, TS string
	// TriggerID opens a form (the "Answer…" button).
	TriggerID string
	// Form holds a submitted form's state; nil for a button.
	Form map[string]map[string]slackapi.BlockAction
	// Questions are the prints of the questions a submitted form showed.
	Questions []string
}

// ErrNotOurs is a payload watchdogd ignores (acknowledged, nothing done):
// another app's, a link button's, a form closed.
var ErrNotOurs = fmt.Errorf("not a watchdogd button or form")

// maxPayload bounds what is read of one interaction: a click carries the
// message clicked, and an HTTP request's body, which holds the payload,
// is bounded at what the largest message needs (MaxBody).
const maxPayload = MaxBody

// Parse reads an interaction payload (Slack's JSON, as the HTTP mode's
// payload form field or a Socket Mode envelope carries it).
func Parse(payload []byte) (Event, error) {
	if len(payload) > maxPayload {
		return Event{}, fmt.Errorf("an interaction of %d bytes (more than %d)", len(payload), maxPayload)
	}
	var cb slackapi.InteractionCallback
	if err := json.Unmarshal(payload, &cb); err != nil {
		return Event{}, fmt.Errorf("read the interaction: %w", err)
	}
	return FromCallback(cb)
}

// FromCallback reads what Slack's interaction asks.
func FromCallback(cb slackapi.InteractionCallback) (Event, error) {
	switch cb.Type {
	case slackapi.InteractionTypeBlockActions:
		for _, a := range cb.ActionCallback.BlockActions {
			if !strings.HasPrefix(a.ActionID, slack.ActionPrefix) || a.ActionID == slack.ActionPrefix+"link" {
				continue
			}
			v, err := slack.DecodeValue(a.Value)
			if err != nil {
				return Event{}, err
			}
			ts := cb.Container.MessageTs
			if ts == "" {
				ts = cb.Message.Timestamp
			}
			ch := cb.Container.ChannelID
			if ch == "" {
				ch = cb.Channel.ID
			}
			return Event{Value: v, User: cb.User.ID, Channel: ch, TS: ts, TriggerID: cb.TriggerID}, nil
		}
	case slackapi.InteractionTypeViewSubmission:
		if cb.View.CallbackID != slack.FormCallback {
			break
		}
		m, err := slack.DecodeFormMeta(cb.View.PrivateMetadata)
		if err != nil {
			return Event{}, err
		}
		state := map[string]map[string]slackapi.BlockAction{}
		if cb.View.State != nil {
			for block, acts := range cb.View.State.Values {
				state[block] = acts
			}
		}
		return Event{Value: m.Value, User: cb.User.ID, Channel: m.Channel, TS: m.TS, Form: state, Questions: m.Questions}, nil
	}
	return Event{}, ErrNotOurs
}
