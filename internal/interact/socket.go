package interact

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/config"
)

// Socket receives interactions over Socket Mode: apps.connections.open
// with the app-level token gives a WebSocket URL, Slack sends envelopes
// on it, and each is acknowledged by its envelope_id once its click is
// saved (an envelope not acknowledged is sent again: no click is lost to a
// crash or a reconnect). socketmode reconnects on Slack's disconnect
// envelope and on a dead connection; Run starts it again, after a pause,
// when it gives up.
type Socket struct {
	Handler *Handler
	// API is a Slack client with the app-level token (and the API URL).
	API *slackapi.Client
	// Connected, when set, hears of each connection made (a test, the log).
	Connected func()
}

// SocketAPI is the Slack client Socket Mode connects with: the bot token,
// the app-level token, and the API's URL (slack.api_url).
func SocketAPI(bot, app config.Secret, apiURL string) *slackapi.Client {
	if !strings.HasSuffix(apiURL, "/") {
		apiURL += "/"
	}
	return slackapi.New(bot.Reveal(), slackapi.OptionAppLevelToken(app.Reveal()), slackapi.OptionAPIURL(apiURL))
}

// Run receives until ctx ends.
func (s *Socket) Run(ctx context.Context) {
	log := s.Handler.Log
	log.Info("receiving Slack clicks over Socket Mode")
	for pause := time.Second; ctx.Err() == nil; pause = min(2*pause, time.Minute) {
		c := socketmode.New(s.API)
		done := make(chan error, 1)
		go func() { done <- c.RunContext(ctx) }()
		err := s.receive(ctx, c, done)
		if ctx.Err() != nil {
			return
		}
		log.Warn("Slack Socket Mode stopped; connecting again", zap.Duration("after", pause), zap.Error(err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
	}
}

// inFlight bounds the interactions handled at once on one connection.
// Each is saved before it is acknowledged, and Slack wants the
// acknowledgement within 3 seconds: one slow to save (a user group's
// members asked of Slack, a ledger busy) must not hold the ones behind it
// past theirs. Past the bound, reading waits.
const inFlight = 16

// receive handles one socketmode client's events until it stops, the
// interactions each in its own goroutine (at most inFlight), the rest in
// order. It returns once those under way have ended.
func (s *Socket) receive(ctx context.Context, c *socketmode.Client, done <-chan error) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, inFlight)
	for {
		select {
		case err := <-done:
			return err
		case evt := <-c.Events:
			if evt.Type != socketmode.EventTypeInteractive {
				s.event(ctx, c, evt)
				continue
			}
			select {
			case slots <- struct{}{}:
			case err := <-done:
				return err
			}
			wg.Go(func() {
				defer func() { <-slots }()
				s.event(ctx, c, evt)
			})
		}
	}
}

// ack acknowledges an envelope, giving up after a while: the connection
// it came on may be gone (Slack sends it again on the next).
func ack(ctx context.Context, c *socketmode.Client, req *socketmode.Request, reply *Reply) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if reply == nil {
		return c.AckCtx(ctx, req.EnvelopeID, nil)
	}
	return c.AckCtx(ctx, req.EnvelopeID, reply)
}

// event handles one socketmode event: an interaction is saved, then
// acknowledged; anything else is logged or ignored.
func (s *Socket) event(ctx context.Context, c *socketmode.Client, evt socketmode.Event) {
	log := s.Handler.Log
	switch evt.Type {
	case socketmode.EventTypeConnected:
		log.Info("connected to Slack over Socket Mode")
		if s.Connected != nil {
			s.Connected()
		}
	case socketmode.EventTypeInvalidAuth, socketmode.EventTypeConnectionError:
		log.Warn("Slack Socket Mode connection failed", zap.String("event", string(evt.Type)), zap.Any("detail", evt.Data))
	case socketmode.EventTypeInteractive:
		if evt.Request == nil {
			return
		}
		cb, ok := evt.Data.(slackapi.InteractionCallback)
		if !ok {
			s.Handler.count("malformed")
			_ = ack(ctx, c, evt.Request, nil)
			return
		}
		ev, err := FromCallback(cb)
		var reply *Reply
		switch {
		case errors.Is(err, ErrNotOurs):
		case err != nil:
			s.Handler.count("malformed")
			log.Warn("an interaction from Slack watchdogd cannot read", zap.Error(err))
		default:
			hctx, cancel := context.WithTimeout(ctx, 2500*time.Millisecond)
			reply, err = s.Handler.Handle(hctx, ev)
			cancel()
			if err != nil {
				return // not acknowledged: Slack sends it again
			}
		}
		if err := ack(ctx, c, evt.Request, reply); err != nil {
			log.Warn("acknowledge an interaction", zap.Error(err))
		}
	default:
		if evt.Request != nil && evt.Request.EnvelopeID != "" {
			_ = ack(ctx, c, evt.Request, nil) // events watchdogd does not subscribe to
		}
	}
}

// Check connects to Slack over Socket Mode once (apps.connections.open
// with the app-level token, then the WebSocket until Slack's hello) and
// disconnects: notify-test's proof that clicks can arrive.
func Check(ctx context.Context, api *slackapi.Client) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	c := socketmode.New(api)
	done := make(chan error, 1)
	go func() { done <- c.RunContext(ctx) }()
	for {
		select {
		case err := <-done:
			if err == nil || errors.Is(err, context.Canceled) {
				err = errors.New("the connection closed before Slack's hello")
			}
			return fmt.Errorf("Socket Mode: %w", err)
		case <-ctx.Done():
			return fmt.Errorf("Socket Mode: no hello from Slack within 15s: %w", ctx.Err())
		case evt := <-c.Events:
			switch evt.Type {
			case socketmode.EventTypeHello:
				cancel()
				if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
					return fmt.Errorf("Socket Mode: closing: %w", err)
				}
				return nil
			case socketmode.EventTypeInvalidAuth:
				return fmt.Errorf("Socket Mode: Slack refused the app-level token (invalid_auth)")
			case socketmode.EventTypeConnectionError:
				return fmt.Errorf("Socket Mode: %v", evt.Data)
			}
		}
	}
}
