// Package slack is watchdogd's Slack outlet: it renders a finding as a
// Block Kit message (pure: the message is rendered when its action is
// decided and frozen in the ledger), posts it, threads later steps under
// it, edits it when the episode clears, looks for an earlier post by its
// key, and gives Slack's answers their verdict (Classify) through
// slack-go.
package slack

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/words"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
)

// Block Kit limits: a section's text, a message's blocks, the text of all
// its blocks together, and the fallback text watchdogd allows itself.
// Truncating to them means a huge question is never a rejected — lost —
// message.
//
// Slack rejects a message whose blocks hold too much text in total
// (msg_blocks_too_long) at a limit it does not document: its users saw
// rejections from about 11,300 characters (slackapi/bolt-js#2509, #2867).
// maxMessageText keeps well under that, with room for the line a resolve
// adds on top.
const (
	maxSectionText = 3000
	maxBlocks      = 50
	maxMessageText = 8000
	maxFallback    = 3000
)

// moreNotShown ends a message that was cut to fit.
const moreNotShown = "… more not shown; open the task in kandev."

// Message is a rendered Slack message, frozen in the ledger as JSON.
type Message struct {
	Text   string          `json:"text"`
	Blocks slackapi.Blocks `json:"blocks"`
}

// Encode is the body stored in an action row.
func (m Message) Encode() string {
	b, err := json.Marshal(m)
	if err != nil {
		return `{"text":"(unrenderable)"}`
	}
	return string(b)
}

// DecodeMessage reads a stored body.
func DecodeMessage(body string) (Message, error) {
	var m Message
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return Message{}, fmt.Errorf("decode stored message: %w", err)
	}
	return m, nil
}

// RenderOptions shape a rendering.
type RenderOptions struct {
	// Mention is prepended (a route's <!subteam^…>), already Slack syntax.
	Mention string
	// Reply renders a short thread reply rather than the full first post.
	Reply bool
	// KindChange renders the reply that says the question's visibility in
	// kandev changed.
	KindChange bool
	// Buttons, when set, puts the episode's buttons under a first post
	// (slack.interactivity); Episode names the episode they act on.
	Buttons bool
	Episode string
	Now     time.Time
}

// Render builds the Slack message for a finding. The first line says what
// is wrong and who owes the next move; the rest is evidence and one link.
// Agent-written text (titles, questions, options) never reaches mrkdwn
// unescaped: it is either escaped (&, <, >, formatting characters) or sent
// as plain_text, so it can neither ping @channel nor break formatting.
func Render(f scan.Finding, o RenderOptions) Message {
	head, body := headline(f)
	if o.KindChange {
		head, body = kindChangeText(f)
	}
	label := escapeText(term.TitleLabel(f.TaskTitle, f.TaskID))
	title := fmt.Sprintf("<%s|%s>", escapeURL(f.Link), label)
	first := fmt.Sprintf("%s *%s* %s", emoji(f.Kind), head, title)
	if o.Mention != "" {
		first = o.Mention + " " + first
	}
	if body != "" {
		first += "\n" + body
	}
	head1 := mrkdwn(first)
	footer := mrkdwn(fmt.Sprintf("session `%s` · workspace `%s` · %s · watchdogd",
		escapeCode(f.SessionID), escapeCode(f.WorkspaceID), model.KindWords(f.Kind)))
	blocks := []slackapi.Block{section(head1)}
	var buttons []slackapi.Block
	if o.Buttons && !o.Reply && !o.KindChange {
		buttons = Buttons(f, o.Episode)
	}
	if !o.Reply {
		budget := maxMessageText - utf8.RuneCountInString(head1.Text) - utf8.RuneCountInString(footer.Text) - buttonsText(buttons)
		blocks = append(blocks, evidence(f, budget, len(buttons))...)
	}
	blocks = append(blocks, buttons...)
	blocks = append(blocks, slackapi.NewContextBlock("", footer))
	text := fmt.Sprintf("%s %s %s", o.Mention, head, label)
	return Message{Text: clip(strings.TrimSpace(text), maxFallback), Blocks: slackapi.Blocks{BlockSet: blocks}}
}

// RenderResolved edits a first message: a cleared line on top, the original
// evidence below (without re-pinging anyone), and no buttons: there is
// nothing left to act on.
func RenderResolved(original Message, reason string, after time.Duration) Message {
	line := fmt.Sprintf(":white_check_mark: *Cleared after %s:* %s.", term.Minutes(after), escapeText(reason))
	blocks := []slackapi.Block{section(mrkdwn(line))}
	for _, b := range withoutButtons(original.Blocks.BlockSet) {
		if len(blocks) >= maxBlocks {
			break
		}
		blocks = append(blocks, b)
	}
	return Message{Text: clip(fmt.Sprintf("Cleared after %s: %s. %s", term.Minutes(after), escapeText(reason), original.Text), maxFallback),
		Blocks: slackapi.Blocks{BlockSet: blocks}}
}

// ClearedReply is a resolve that may not edit the first message, as a
// reply in its thread: the cleared line alone, since the evidence is the
// message right above it.
func ClearedReply(resolved Message) Message {
	if len(resolved.Blocks.BlockSet) == 0 {
		return resolved
	}
	return Message{Text: resolved.Text, Blocks: slackapi.Blocks{BlockSet: resolved.Blocks.BlockSet[:1]}}
}

// headline is the first line's bold part and the sentence after the link:
// the finding's words, agent text escaped for mrkdwn, moments as date
// tokens.
func headline(f scan.Finding) (string, string) {
	return words.Headline(f, words.Style{Date: slackDate, Escape: escapeText})
}

func kindChangeText(f scan.Finding) (string, string) {
	if f.Kind == model.KindShadowedClarification {
		return "Now hidden in kandev:", "The agent was resumed and kandev treats a newer turn as current, so the question is not shown and answering it there will fail. " +
			"Reply in the session with your answer, or ask the agent to ask again."
	}
	return "Visible in kandev again:", "Answer the question in kandev."
}

// evidence is the plain_text part of a first post: questions and options,
// or the permission asked for. It stays within budget characters and
// maxBlocks-2-reserved blocks (the headline, the context line and the
// buttons take the others); what does not fit is replaced by a visible
// notice.
func evidence(f scan.Finding, budget, reserved int) []slackapi.Block {
	d := f.Detail
	if d == nil {
		return nil
	}
	var texts []string
	questions := 0 // the questions whose text is in texts
	for _, q := range d.Questions {
		text := q.Title
		if q.Prompt != "" && q.Prompt != q.Title {
			text = strings.TrimSpace(text + "\n" + q.Prompt)
		}
		if text == "" {
			text = "(question " + q.ID + ")"
		}
		texts = append(texts, text)
		if len(q.Options) > 0 {
			var b strings.Builder
			for _, o := range q.Options {
				b.WriteString("• " + o.Label)
				if o.Description != "" {
					b.WriteString(" — " + o.Description)
				}
				b.WriteString("\n")
			}
			texts = append(texts, strings.TrimSpace(b.String()))
		}
		questions++
		if len(texts) > maxBlocks {
			break // more than could ever be shown
		}
	}
	if d.Detached {
		texts = append(texts, "The agent disconnected after asking; the question can still be answered.")
	}
	if d.Permission != "" {
		texts = append(texts, d.Permission)
	}
	if p := d.LostPermission; p != nil && p.Permission != "" {
		texts = append(texts, "Permission asked before: "+p.Permission)
	}
	return fit(texts, budget, maxBlocks-2-reserved, len(d.Questions)-questions)
}

// fit turns texts into plain_text sections, at most blocks of them with at
// most budget characters in all, clipping the first one that fits only in
// part. When anything is left out (untold counts questions that were never
// among texts), the last section says so.
func fit(texts []string, budget, blocks, untold int) []slackapi.Block {
	const notice = moreNotShown
	const least = 200 // a clipped section shorter than this is not worth showing
	var out []slackapi.Block
	left := budget - utf8.RuneCountInString(notice) // the notice always fits
	for i, t := range texts {
		more := i+1 < len(texts) || untold > 0
		n := min(utf8.RuneCountInString(t), maxSectionText)
		switch {
		case len(out) == blocks-1 && more, n > left && left < least:
			return append(out, section(plain(notice)))
		case n > left:
			out = append(out, section(plain(clip(t, left))))
			if more {
				out = append(out, section(plain(notice)))
			}
			return out
		}
		out = append(out, section(plain(t)))
		left -= n
	}
	if untold > 0 {
		out = append(out, section(plain(notice)))
	}
	return out
}

// WithinLimits is the last guard before Slack. A body is frozen in the
// ledger when its action is decided, so one rendered by an older watchdogd,
// or a resolve's line on top of a full message, may hold more text than
// Slack takes; it is cut here, with the notice, rather than refused for
// good. A message within maxMessageText plus a resolve line is unchanged.
func WithinLimits(m Message) Message {
	const hard = maxMessageText + 500
	blocks := m.Blocks.BlockSet
	total := 0
	for i, b := range blocks {
		n := blockText(b)
		if i < maxBlocks && total+n <= hard {
			total += n
			continue
		}
		kept := append([]slackapi.Block(nil), blocks[:min(i, maxBlocks-1)]...)
		return Message{Text: m.Text, Blocks: slackapi.Blocks{BlockSet: append(kept, section(plain(moreNotShown)))}}
	}
	return m
}

// blockText counts the characters of the text objects in the blocks
// watchdogd renders (sections and context lines).
func blockText(b slackapi.Block) int {
	n := 0
	switch v := b.(type) {
	case *slackapi.SectionBlock:
		if v.Text != nil {
			n += utf8.RuneCountInString(v.Text.Text)
		}
		for _, f := range v.Fields {
			n += utf8.RuneCountInString(f.Text)
		}
	case *slackapi.ContextBlock:
		for _, e := range v.ContextElements.Elements {
			if t, ok := e.(*slackapi.TextBlockObject); ok {
				n += utf8.RuneCountInString(t.Text)
			}
		}
	}
	return n
}

func section(t *slackapi.TextBlockObject) slackapi.Block {
	return slackapi.NewSectionBlock(t, nil, nil)
}

func mrkdwn(s string) *slackapi.TextBlockObject {
	return slackapi.NewTextBlockObject(slackapi.MarkdownType, clip(s, maxSectionText), false, true)
}

func plain(s string) *slackapi.TextBlockObject {
	return slackapi.NewTextBlockObject(slackapi.PlainTextType, clip(s, maxSectionText), false, false)
}

// clip truncates to n characters with a visible "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// emojis lead each kind's first line; a kind without one gets :warning:.
var emojis = map[model.Kind]string{
	model.KindStalledTurn:             ":hourglass_flowing_sand:",
	model.KindNeverStarted:            ":hourglass_flowing_sand:",
	model.KindUnansweredClarification: ":question:",
	model.KindShadowedClarification:   ":question:",
	model.KindPendingPermission:       ":lock:",
	model.KindInterruptedSession:      ":double_vertical_bar:",
	model.KindMultipleOpenTurns:       ":warning:",
}

func emoji(kind model.Kind) string {
	if e, ok := emojis[kind]; ok {
		return e
	}
	return ":warning:"
}
