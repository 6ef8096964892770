package interact_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"

	"github.com/watchdogd/watchdogd/internal/interact"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/slack"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// wide is a character JSON and the form encode at their largest: beyond
// the Basic Multilingual Plane, a surrogate pair of \u escapes.
const wide = "𝕏"

func widely(n int) string { return strings.Repeat(wide, n) }

// largest are the largest messages watchdogd renders with buttons, one
// per shape of buttons: every value at the most the scan keeps of it
// (model.MaxText, MaxOptionText, MaxOptions), written in wide characters,
// the ids kandev gives and the task's link as long as Slack takes them, a
// route's mention.
func largest() map[string]scan.Finding {
	option := func(i int) scan.Option {
		return scan.Option{ID: fmt.Sprint(i), Label: widely(model.MaxOptionText), Description: widely(model.MaxOptionText)}
	}
	question := func(options int) scan.Question {
		q := scan.Question{ID: "q", Title: widely(model.MaxText), Prompt: widely(model.MaxText)}
		for i := range options {
			q.Options = append(q.Options, option(i))
		}
		return q
	}
	base := scan.Finding{SessionID: widely(3000), WorkspaceID: widely(3000), TaskID: widely(240), TaskTitle: widely(model.MaxText),
		AgeSeconds: 99 * 86400, Detail: &scan.Detail{}}
	base.Link = scan.TaskLink("https://kandev.example.com", base.TaskID) // just under Slack's 3,000
	with := func(kind model.Kind, d scan.Detail) scan.Finding {
		f := base
		f.Kind, f.Detail = kind, &d
		return f
	}
	var perms []scan.PermissionOption
	for i := range 24 {
		perms = append(perms, scan.PermissionOption{ID: fmt.Sprint(i), Name: widely(model.MaxOptionText), Kind: "allow_once"})
	}
	var bundle, short []scan.Question
	for i := range 45 {
		bundle = append(bundle, question(model.MaxOptions))
		short = append(short, scan.Question{ID: fmt.Sprint(i), Title: "?", Options: []scan.Option{{ID: "a", Label: "a"}}})
	}
	last := "2026-01-01T00:00:00Z"
	return map[string]scan.Finding{
		"a question with a button per option": with(model.KindUnansweredClarification, scan.Detail{Questions: []scan.Question{question(24)}}),
		"a hidden question's options to send": with(model.KindShadowedClarification, scan.Detail{Questions: []scan.Question{question(24)}}),
		"a bundle's form":                     with(model.KindUnansweredClarification, scan.Detail{Questions: bundle, Detached: true}),
		"a bundle in every block":             with(model.KindUnansweredClarification, scan.Detail{Questions: short}),
		"a permission's options":              with(model.KindPendingPermission, scan.Detail{Permission: widely(model.MaxText), PermissionRequestID: "r", PermissionOptions: perms}),
		"a stall to cancel":                   with(model.KindStalledTurn, scan.Detail{LastActivityAt: &last, LastActivityType: widely(model.MaxText)}),
		"a session parked":                    with(model.KindInterruptedSession, scan.Detail{Interruption: scan.InterruptionLostPermission, LostPermission: &scan.LostPermission{Permission: widely(model.MaxText)}}),
	}
}

// TestLargestClickFitsMaxBody: a click on the largest message watchdogd
// renders, as Slack sends it (the message whole in a block_actions
// payload, every character escaped at its largest), fits in MaxBody, and
// the message is within the limits MaxBody is derived from.
func TestLargestClickFitsMaxBody(t *testing.T) {
	for name, f := range largest() {
		m := slack.Render(f, slack.RenderOptions{Mention: "<!subteam^S0123ABCDEF>", Buttons: true, Episode: "0b0e5b9a-6c7e-4d33-9a51-2f1d3c4b5a69"})
		text, blocks, buttons := utf8.RuneCountInString(m.Text), len(m.Blocks.BlockSet), 0
		var clicked *slackapi.ButtonBlockElement
		for _, b := range m.Blocks.BlockSet {
			switch b := b.(type) {
			case *slackapi.SectionBlock:
				text += utf8.RuneCountInString(b.Text.Text)
			case *slackapi.ContextBlock:
				for _, e := range b.ContextElements.Elements {
					text += utf8.RuneCountInString(e.(*slackapi.TextBlockObject).Text)
				}
			case *slackapi.ActionBlock:
				for _, e := range b.Elements.ElementSet {
					btn := e.(*slackapi.ButtonBlockElement)
					buttons++
					text += utf8.RuneCountInString(btn.Text.Text)
					if n := len(btn.Value) + len(btn.ActionID); n > slack.MaxButtonValue {
						t.Errorf("%s: a button's value and action id hold %d characters, more than slack.MaxButtonValue", name, n)
					}
					if len(btn.URL) > slack.MaxURL {
						t.Errorf("%s: a link of %d characters", name, len(btn.URL))
					}
					if clicked == nil && btn.URL == "" {
						clicked = btn
					}
				}
			}
		}
		if text > slack.MaxText || blocks > slack.MaxBlocks || buttons > slack.MaxButtons {
			t.Errorf("%s: %d characters, %d blocks, %d buttons: more than slack.MaxText %d, MaxBlocks %d or MaxButtons %d",
				name, text, blocks, buttons, slack.MaxText, slack.MaxBlocks, slack.MaxButtons)
		}
		body := clickBody(t, m, clicked)
		if len(body) > interact.MaxBody {
			t.Errorf("%s: a click's body of %d bytes, more than MaxBody (%d)", name, len(body), interact.MaxBody)
		}
		t.Logf("%s: %d characters of text, %d blocks, %d buttons; a click's body %d bytes (%.0f %% of MaxBody)",
			name, text, blocks, buttons, len(body), 100*float64(len(body))/interact.MaxBody)
	}
}

// clickBody is the body of Slack's request for a click on btn of m:
// m's blocks as Slack gives them back (a block_id on each, emoji on plain
// text, verbatim on mrkdwn), in a block_actions payload with what Slack
// puts around them, JSON-encoded at its largest (every character outside
// ASCII and every / escaped) in the form field payload.
func clickBody(t *testing.T, m slack.Message, btn *slackapi.ButtonBlockElement) string {
	t.Helper()
	raw, err := json.Marshal(m.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []any
	if err := json.Unmarshal(raw, &blocks); err != nil {
		t.Fatal(err)
	}
	for i, b := range blocks {
		if b := b.(map[string]any); b["block_id"] == nil {
			b["block_id"] = fmt.Sprintf("Zx%03d", i)
		}
		asSlackSays(b)
	}
	team := map[string]any{"id": "T0123ABCDEF", "domain": "example-engineering-workspace"}
	icons := map[string]any{}
	for _, px := range []string{"36", "48", "72"} {
		icons["image_"+px] = "https://avatars.slack-edge.com/2026-01-01/1234567890123_0123456789abcdef0123_" + px + ".png"
	}
	action := map[string]any{"type": "button", "block_id": "watchdogd-act", "action_id": btn.ActionID, "value": btn.Value,
		"text": map[string]any{"type": "plain_text", "text": btn.Text.Text, "emoji": true}, "style": "primary", "action_ts": "1767326130.289415"}
	payload := map[string]any{
		"type":       "block_actions",
		"user":       map[string]any{"id": "U0123ABCDEF", "username": "alice.example", "name": "alice.example", "team_id": "T0123ABCDEF"},
		"api_app_id": "A0123ABCDEF", "token": "abcdefghijklmnopqrstuvwx",
		"container":  map[string]any{"type": "message", "message_ts": "1767326126.896109", "channel_id": "C0123ABCDEF", "is_ephemeral": false},
		"trigger_id": "10215325802133.3901254001572.2e2548aa918b35fd85829545c2d4ae2b",
		"team":       team, "enterprise": map[string]any{"id": "E0123ABCDEF", "name": "Example Enterprise"}, "is_enterprise_install": false,
		"channel": map[string]any{"id": "C0123ABCDEF", "name": "kandev-agents-on-call"},
		"message": map[string]any{"user": "U0BOTUSER01", "type": "message", "ts": "1767326126.896109", "bot_id": "B0123ABCDEF", "app_id": "A0123ABCDEF",
			"text": m.Text, "team": "T0123ABCDEF", "blocks": blocks,
			"metadata":    map[string]any{"event_type": slack.EventType, "event_payload": map[string]any{"key": strings.Repeat("f", 64)}},
			"bot_profile": map[string]any{"id": "B0123ABCDEF", "deleted": false, "name": "watchdogd", "updated": 1767326126, "app_id": "A0123ABCDEF", "icons": icons, "team_id": "T0123ABCDEF"}},
		"state":        map[string]any{"values": map[string]any{}},
		"response_url": "https://hooks.slack.com/actions/T0123ABCDEF/10215325802133/0123456789abcdefABCDEFGH",
		"actions":      []any{action},
	}
	b, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return "payload=" + url.QueryEscape(escapeAll(string(b)))
}

// asSlackSays adds what Slack adds to the text objects of a block it
// gives back.
func asSlackSays(v any) {
	switch v := v.(type) {
	case map[string]any:
		switch v["type"] {
		case "plain_text":
			v["emoji"] = true
		case "mrkdwn":
			v["verbatim"] = false
		}
		for _, x := range v {
			asSlackSays(x)
		}
	case []any:
		for _, x := range v {
			asSlackSays(x)
		}
	}
}

// escapeAll escapes, in JSON, every character outside ASCII (one beyond
// the Basic Multilingual Plane as a surrogate pair) and every /: the
// largest a JSON encoder writes them.
func escapeAll(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '/':
			b.WriteString(`\/`)
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}
