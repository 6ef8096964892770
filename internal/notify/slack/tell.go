package slack

import (
	"context"
	"fmt"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
)

// renderTell freezes what a click's story edits: the episode's first
// message as it was sent. The story itself (who did what, or why nothing
// was done) is known only once the click settles, so Send writes it.
func renderTell(r notify.Rendering) (string, error) {
	for _, a := range r.Episode.Actions {
		if a.Kind == model.ActionSlack && a.ParentKey == "" && a.Body != "" {
			return a.Body, nil
		}
	}
	return Message{Text: "watchdogd"}.Encode(), nil
}

// tell tells a settled click's story: a click that acted edits the first
// message once ("Answered by @alice from Slack: *pgx*", buttons removed; a
// snooze keeps them), one that did not is an ephemeral reply to the person
// who clicked with the reason. Parent or Unsent is the click.
func (o *Outlet) tell(ctx context.Context, at notify.Attempt) notify.Sent {
	click, acted := at.Parent, true
	if click == nil {
		click, acted = at.Unsent, false
	}
	if click == nil {
		return notify.Failed("the click this tells of is not in the ledger")
	}
	b, err := model.DecodeClick(click.Body)
	if err != nil {
		return notify.Failed("decode the click: " + err.Error())
	}
	if !acted {
		text := fmt.Sprintf("watchdogd did not %s: %s", Doing(click.Kind, b), click.Error) // plain: Ephemeral escapes it
		if err := o.Client.Ephemeral(ctx, b.Channel, b.User, text); err != nil {
			return failed(err)
		}
		return notify.Delivered(b.Channel, "")
	}
	orig, err := DecodeMessage(at.Action.Body)
	if err != nil {
		return notify.Failed(err.Error())
	}
	m := Told(orig, Story(click.Kind, b), click.Kind == model.ActionSnooze)
	err = o.Client.Update(ctx, b.Channel, b.TS, m)
	if v := Classify(err); err != nil && v.Gone {
		return notify.Superseded("the message clicked is no longer in Slack (deleted there); nothing to edit")
	} else if err != nil {
		return failed(err)
	}
	return notify.Delivered(b.Channel, b.TS)
}

// Story is the line a first message gains once a click acted.
func Story(kind model.ActionKind, b model.ClickBody) string {
	who := "<@" + escapeText(b.User) + ">"
	switch kind {
	case model.ActionAnswer:
		return fmt.Sprintf(":speech_balloon: *Answered by %s from Slack:* *%s*", who, escapeText(b.What))
	case model.ActionPermission:
		return fmt.Sprintf(":key: *%s by %s from Slack*", granted(b), who)
	case model.ActionSendMessage:
		return fmt.Sprintf(":speech_balloon: *Sent as a message by %s from Slack:* *%s*", who, escapeText(b.What))
	case model.ActionCancelAndNudge:
		return fmt.Sprintf(":leftwards_arrow_with_hook: *Turn cancelled and agent nudged by %s from Slack*", who)
	case model.ActionSnooze:
		return fmt.Sprintf(":zzz: *Snoozed by %s until %s*", who, b.Until.UTC().Format("15:04 UTC"))
	case model.ActionResolve:
		return fmt.Sprintf(":white_check_mark: *Resolved by %s from Slack* (silenced until it clears)", who)
	}
	return "*" + escapeText(string(kind)) + " by " + who + "*"
}

// granted says what a permission's answer did, by kandev's kind of the
// option chosen: "Allowed (allow once)", "Rejected (reject always)"; an
// option of another kind (or one clicked before kinds were kept) by its
// name: "Answered “Skip”". The name is not a verb: "Allow by @alice" read
// as an order.
func granted(b model.ClickBody) string {
	words := escapeText(strings.ReplaceAll(b.OptionKind, "_", " "))
	switch {
	case strings.HasPrefix(b.OptionKind, "allow"):
		return "Allowed (" + words + ")"
	case strings.HasPrefix(b.OptionKind, "reject"):
		return "Rejected (" + words + ")"
	}
	return "Answered “" + escapeText(b.What) + "”"
}

// Doing names what a click asked for, in an ephemeral refusal.
func Doing(kind model.ActionKind, b model.ClickBody) string {
	switch kind {
	case model.ActionAnswer:
		return "answer “" + b.What + "”"
	case model.ActionPermission:
		return "answer the permission with “" + b.What + "”"
	case model.ActionSendMessage:
		return "send “" + b.What + "” as a message"
	case model.ActionCancelAndNudge:
		return "cancel the turn and nudge the agent"
	case model.ActionSnooze:
		return "snooze the alert"
	case model.ActionResolve:
		return "resolve the alert"
	}
	return "act"
}

// Told is the first message under a story line; buttons stay only when
// keep is set (a snooze: the alert may still be answered or resolved).
func Told(orig Message, line string, keep bool) Message {
	blocks := []slackapi.Block{section(mrkdwn(line))}
	rest := orig.Blocks.BlockSet
	if !keep {
		rest = withoutButtons(rest)
	}
	for _, b := range rest {
		if len(blocks) >= maxBlocks {
			break
		}
		blocks = append(blocks, b)
	}
	// The text starts with the story too: it is what Find compares.
	return Message{Text: clip(line+"\n"+orig.Text, maxFallback), Blocks: slackapi.Blocks{BlockSet: blocks}}
}

// findTold says whether an edit an interrupted attempt made is in Slack
// already: the message clicked carries the story's text. An ephemeral
// reply cannot be looked for (Slack keeps none); it is sent again.
func (o *Outlet) findTold(ctx context.Context, at notify.Attempt) (notify.Sent, bool) {
	if at.Parent == nil {
		return notify.Sent{}, false
	}
	b, err := model.DecodeClick(at.Parent.Body)
	if err != nil {
		return notify.Sent{}, false
	}
	orig, err := DecodeMessage(at.Action.Body)
	if err != nil {
		return notify.Sent{}, false
	}
	want := WithinLimits(Told(orig, Story(at.Parent.Kind, b), at.Parent.Kind == model.ActionSnooze)).Text
	text, err := o.Client.TextAt(ctx, b.Channel, b.TS)
	switch {
	case err != nil:
		return failed(err), true
	case text == want:
		return notify.Delivered(b.Channel, b.TS), true
	}
	return notify.Sent{}, false
}

// TextAt is the text of the message at ts in channel, "" when it is not
// there (conversations.history bounded to that instant).
func (s *Client) TextAt(ctx context.Context, channel, ts string) (string, error) {
	resp, err := s.client.GetConversationHistoryContext(ctx, &slackapi.GetConversationHistoryParameters{
		ChannelID: channel, Oldest: ts, Latest: ts, Inclusive: true, Limit: 1})
	if err != nil {
		return "", fmt.Errorf("conversations.history at %s in %s: %w", ts, channel, err)
	}
	for _, m := range resp.Messages {
		if m.Timestamp == ts {
			return m.Text, nil
		}
	}
	return "", nil
}

// Ephemeral shows text to one user in a channel (chat.postEphemeral).
// text is plain and shown as written: every reply of this kind carries
// words someone else wrote (an agent's option label, kandev's error, a
// refusal quoting either), so it is escaped here, once, for all of them:
// nothing in it can mention, link or format.
func (s *Client) Ephemeral(ctx context.Context, channel, user, text string) error {
	if err := s.pace(ctx, channel); err != nil {
		return err
	}
	_, err := s.client.PostEphemeralContext(ctx, channel, user, slackapi.MsgOptionText(clip(escapeText(text), maxFallback), false))
	if err != nil {
		return fmt.Errorf("chat.postEphemeral to %s in %s: %w", user, channel, err)
	}
	return nil
}

// UsergroupMembers lists a user group's members (usergroups.users.list):
// who a listed group lets act.
func (s *Client) UsergroupMembers(ctx context.Context, group string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	m, err := s.client.GetUserGroupMembersContext(ctx, group)
	if err != nil {
		return nil, fmt.Errorf("usergroups.users.list of %s: %w", group, err)
	}
	return m, nil
}
