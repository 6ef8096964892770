package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"golang.org/x/time/rate"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/notify"
)

// EventType marks watchdogd's messages in Slack's message metadata, so that
// a delivery whose outcome was lost can be found again.
const EventType = "watchdogd_action"

// Client posts, edits and finds watchdogd's messages through Slack's Web API,
// pacing each channel at one message per second as Slack asks.
type Client struct {
	client *slackapi.Client

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

// NewClient builds a client; apiURL overrides Slack's (tests).
func NewClient(token config.Secret, apiURL string, timeout time.Duration) *Client {
	if !strings.HasSuffix(apiURL, "/") {
		apiURL += "/"
	}
	return &Client{client: slackapi.New(token.Reveal(), slackapi.OptionAPIURL(apiURL), slackapi.OptionHTTPClient(&http.Client{Timeout: timeout})),
		limiters: map[string]*rate.Limiter{}}
}

// pace waits for the channel's next slot.
func (s *Client) pace(ctx context.Context, channel string) error {
	s.mu.Lock()
	l, ok := s.limiters[channel]
	if !ok {
		l = rate.NewLimiter(rate.Every(time.Second), 1)
		s.limiters[channel] = l
	}
	s.mu.Unlock()
	if err := l.Wait(ctx); err != nil {
		return fmt.Errorf("%w: waiting for the next slot in %s: %w", notify.ErrNotSent, channel, err)
	}
	return nil
}

// Post sends a message (a thread reply when threadTS is set) carrying the
// action key in its metadata, and returns its ts.
func (s *Client) Post(ctx context.Context, channel, threadTS, key string, m Message) (string, error) {
	m = WithinLimits(m)
	opts := []slackapi.MsgOption{
		slackapi.MsgOptionText(m.Text, false),
		slackapi.MsgOptionBlocks(m.Blocks.BlockSet...),
		slackapi.MsgOptionMetadata(slackapi.SlackMetadata{EventType: EventType, EventPayload: map[string]any{"key": key}}),
		slackapi.MsgOptionDisableLinkUnfurl(),
	}
	if err := s.pace(ctx, channel); err != nil {
		return "", err
	}
	if threadTS != "" {
		_, ts, err := s.client.PostMessageContext(ctx, channel, append(opts, slackapi.MsgOptionTS(threadTS))...)
		if !threadGone(err) {
			if err != nil {
				return "", fmt.Errorf("chat.postMessage to %s in thread %s: %w", channel, threadTS, err)
			}
			return ts, nil
		}
		// Someone deleted the thread's first message; nothing was posted.
		// The step still goes out, at the top of the channel.
		if err := s.pace(ctx, channel); err != nil {
			return "", err
		}
	}
	_, ts, err := s.client.PostMessageContext(ctx, channel, opts...)
	if err != nil {
		return "", fmt.Errorf("chat.postMessage to %s: %w", channel, err)
	}
	return ts, nil
}

// threadGone reports Slack's answer for a thread whose first message was
// deleted (with no replies left under it).
func threadGone(err error) bool {
	var se slackapi.SlackErrorResponse
	return errors.As(err, &se) && se.Err == "thread_not_found"
}

// Update edits a message in place (a resolve).
func (s *Client) Update(ctx context.Context, channel, ts string, m Message) error {
	m = WithinLimits(m)
	if err := s.pace(ctx, channel); err != nil {
		return err
	}
	_, _, _, err := s.client.UpdateMessageContext(ctx, channel, ts,
		slackapi.MsgOptionText(m.Text, false), slackapi.MsgOptionBlocks(m.Blocks.BlockSet...))
	if err != nil {
		return fmt.Errorf("chat.update of %s in %s: %w", ts, channel, err)
	}
	return nil
}

// Find looks for a message carrying key in a channel's history since
// oldest (conversations.history), or in a thread (conversations.replies),
// and returns its ts. It settles deliveries whose outcome was lost.
// It reads at most 20 pages of 200 messages: past that (a channel busier
// than 4,000 messages since the action was decided) it answers "not
// found", so the action is posted again — a possible duplicate rather than
// a page that is never sent.
func (s *Client) Find(ctx context.Context, channel, threadTS, key string, oldest time.Time) (string, bool, error) {
	ts, found, err := s.find(ctx, channel, threadTS, key, oldest)
	if threadTS != "" && threadGone(err) {
		// The thread's first message was deleted: a reply sent since went
		// to the top of the channel (Post), so look for it there.
		return s.find(ctx, channel, "", key, oldest)
	}
	return ts, found, err
}

// find searches one place: a thread's replies, or the channel's history
// when threadTS is empty.
func (s *Client) find(ctx context.Context, channel, threadTS, key string, oldest time.Time) (string, bool, error) {
	since := strconv.FormatFloat(float64(oldest.Add(-time.Minute).UnixMicro())/1e6, 'f', 6, 64)
	cursor := ""
	for page := 0; page < 20; page++ {
		var msgs []slackapi.Message
		var next string
		if threadTS != "" {
			m, _, nc, err := s.client.GetConversationRepliesContext(ctx, &slackapi.GetConversationRepliesParameters{
				ChannelID: channel, Timestamp: threadTS, Oldest: since, Cursor: cursor, Limit: 200, IncludeAllMetadata: true})
			if err != nil {
				return "", false, fmt.Errorf("conversations.replies in %s: %w", channel, err)
			}
			msgs, next = m, nc
		} else {
			resp, err := s.client.GetConversationHistoryContext(ctx, &slackapi.GetConversationHistoryParameters{
				ChannelID: channel, Oldest: since, Cursor: cursor, Limit: 200, IncludeAllMetadata: true})
			if err != nil {
				return "", false, fmt.Errorf("conversations.history in %s: %w", channel, err)
			}
			msgs, next = resp.Messages, resp.ResponseMetaData.NextCursor
		}
		for _, m := range msgs {
			if m.Metadata.EventType == EventType && fmt.Sprint(m.Metadata.EventPayload["key"]) == key {
				return m.Timestamp, true, nil
			}
		}
		if next == "" {
			return "", false, nil
		}
		cursor = next
	}
	return "", false, nil
}

// ReadHistory proves the token may read a channel's history, which
// settling an interrupted delivery from evidence needs (Find).
func (s *Client) ReadHistory(ctx context.Context, channel string) error {
	if _, err := s.client.GetConversationHistoryContext(ctx, &slackapi.GetConversationHistoryParameters{ChannelID: channel, Limit: 1}); err != nil {
		return fmt.Errorf("conversations.history in %s: %w", channel, err)
	}
	return nil
}

// Test posts notify-test's message.
func (s *Client) Test(ctx context.Context, channel, text string) (string, error) {
	_, ts, err := s.client.PostMessageContext(ctx, channel, slackapi.MsgOptionText(text, false))
	if err != nil {
		return "", fmt.Errorf("chat.postMessage to %s: %w", channel, err)
	}
	return ts, nil
}
