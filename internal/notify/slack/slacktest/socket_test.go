package slacktest_test

import (
	"context"
	"testing"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
)

// TestSocketMode: slack-go's socketmode client connects to the stand-in,
// receives an envelope, acknowledges it, and connects again after a
// disconnect envelope.
func TestSocketMode(t *testing.T) {
	s := slacktest.New("xoxb-t")
	defer s.Close()
	s.EnableSocketMode("xapp-t")
	c := socketmode.New(slackapi.New("xoxb-t", slackapi.OptionAppLevelToken("xapp-t"), slackapi.OptionAPIURL(s.APIURL())))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() { _ = c.RunContext(ctx) }()
	id := s.SendInteraction([]byte(`{"type":"block_actions","user":{"id":"U1"}}`))
	for ctx.Err() == nil {
		select {
		case ev := <-c.Events:
			t.Logf("event %s", ev.Type)
			if ev.Type == socketmode.EventTypeConnectionError {
				t.Fatalf("connection error: %v", ev.Data)
			}
			if ev.Type == socketmode.EventTypeInteractive {
				_ = c.Ack(*ev.Request)
			}
		case <-time.After(100 * time.Millisecond):
		}
		if _, ok := s.Acked(id); ok && s.Connections() == 1 {
			s.Disconnect()
		}
		if s.Connections() >= 2 {
			return
		}
	}
	t.Fatal("no ack and reconnection")
}
