package interact

import (
	"context"
	"errors"
	"sync"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/cycle"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/slack"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
)

// Slack is what the handler says to Slack itself. Ephemeral's text is
// plain (it quotes agent- and kandev-written words): the implementation
// escapes it for Slack.
type Slack interface {
	Ephemeral(ctx context.Context, channel, user, text string) error
	OpenForm(ctx context.Context, triggerID string, view slackapi.ModalViewRequest) error
}

// Handler is the one handler both ways of receiving feed. Any replica
// may run it: the ledger's keys make a click received by two replicas one
// action, and its claim lets one process deliver it; a replica that does
// not lead saves it and the leader's next cycle delivers it.
type Handler struct {
	// Click decides and saves a click (cycle.Click); nil error with no
	// keys is a refusal.
	Click func(ctx context.Context, in cycle.ClickIn) (cycle.Clicked, error)
	// Deliver delivers saved actions now (cycle.DeliverClicks).
	Deliver func(ctx context.Context, keys []string)
	// Form is the finding an "Answer…" click opens its form on
	// (cycle.FormFor): as last seen, once user may act; else why not
	// (refused), or the ledger's error.
	Form  func(ctx context.Context, episode, user string) (f scan.Finding, refused string, err error)
	Slack Slack
	// Count hears each event's result (watchdogd_slack_interactions_total).
	Count func(result string)
	Log   *zap.Logger

	// base bounds the work done after an acknowledgement; wg waits for it.
	base context.Context
	wg   sync.WaitGroup
	// telling are the refusals on their way, by channel, person and
	// words: a person who clicks again meanwhile is not told the same twice,
	// so that clicks by someone not allowed (Slack paces the replies, one a
	// second per channel) cost at most maxTelling waiting replies.
	mu      sync.Mutex
	telling map[string]bool
}

// maxTelling bounds the refusals waiting to be sent at once; past it a
// refusal is logged and not sent.
const maxTelling = 64

// Start sets the context work after an acknowledgement runs under (the
// daemon's: a shutdown waits for it with Wait).
func (h *Handler) Start(ctx context.Context) { h.base = ctx }

// Wait waits for work started after acknowledgements.
func (h *Handler) Wait() { h.wg.Wait() }

// Reply is what Slack's acknowledgement of an event carries back: for a
// form submitted with fields to mend, "errors" by block id, which keeps
// the form open with those fields marked. nil: an empty acknowledgement.
type Reply struct {
	ResponseAction string            `json:"response_action"`
	Errors         map[string]string `json:"errors"`
}

// Handle handles one event before Slack is acknowledged: a form is
// opened (its trigger lasts 3 seconds), a click is saved. It then starts
// what follows (delivery, or telling the person why nothing is done). A
// form submitted with a question left blank, or one kandev changed since,
// is answered with a Reply marking those fields, nothing saved: the form
// stays open with what was typed. An error means nothing was saved: the
// person is told so, and Slack is left unacknowledged (a redelivery, if
// any, is the same action).
func (h *Handler) Handle(ctx context.Context, ev Event) (*Reply, error) {
	if ev.Form == nil && ev.Value.Button == model.ButtonForm {
		h.openForm(ctx, ev)
		return nil, nil
	}
	read := func(e model.Episode, f scan.Finding) (model.Click, string) {
		posted, ok := slack.Posted(e, ev.Channel, ev.TS)
		if !ok {
			return model.Click{}, "watchdogd holds no message of this alert where you clicked (pruned, or not its message)"
		}
		c, err := slack.Chosen(posted, ev.Value, f)
		if err != nil {
			return model.Click{}, term.OneLine(err)
		}
		return c, ""
	}
	var mend map[string]string // a form's fields to mend
	if ev.Form != nil {
		read = func(_ model.Episode, f scan.Finding) (model.Click, string) {
			meta := slack.FormMeta{Value: ev.Value, Channel: ev.Channel, TS: ev.TS, Questions: ev.Questions}
			as, prints, problems := slack.Submitted(f, meta, ev.Form)
			if mend = nil; len(problems) > 0 {
				mend = problems
				return model.Click{}, "the form has fields to mend"
			}
			return model.Click{Button: model.ButtonAnswers, Answers: as, Prints: prints}, ""
		}
	}
	got, err := h.Click(ctx, cycle.ClickIn{Episode: ev.Value.Episode, User: ev.User, Read: read})
	if err != nil {
		h.count("failed")
		h.Log.Warn("a click from Slack was not saved", zap.String("slack_user", ev.User), zap.Error(err))
		// Slack shows the person a bare failure and does not send a click
		// again by itself: say what happened. A redelivery, or the click
		// made again, is the same action.
		h.refuse(ev, "watchdogd could not record your click (its ledger is unavailable), so nothing was done: click again in a minute")
		return nil, err
	}
	if got.Refused != "" && mend != nil {
		h.count("refused")
		h.Log.Info("a form from Slack was sent back to mend", zap.String("slack_user", ev.User), zap.String("episode", ev.Value.Episode),
			zap.Int("fields", len(mend)))
		return &Reply{ResponseAction: "errors", Errors: mend}, nil
	}
	if got.Refused != "" {
		h.count("refused")
		h.Log.Info("a click from Slack was refused", zap.String("slack_user", ev.User), zap.String("episode", ev.Value.Episode),
			zap.String("why", got.Refused))
		h.refuse(ev, "watchdogd did nothing: "+got.Refused)
		return nil, nil
	}
	h.count("accepted")
	h.later(func(ctx context.Context) { h.Deliver(ctx, got.Keys) })
	return nil, nil
}

// openForm opens the answer form for an "Answer…" click by someone who
// may act on the alert (the form shows its question). A form that cannot
// open has nothing to save, and its trigger has expired by a retry: the
// person is told why instead, in words of watchdogd's own where the
// ledger failed (its error names the ledger), Slack's where Slack did.
func (h *Handler) openForm(ctx context.Context, ev Event) {
	f, refused, err := h.Form(ctx, ev.Value.Episode, ev.User)
	switch {
	case err != nil:
		h.count("failed")
		h.Log.Warn("cannot open a form for a click from Slack", zap.String("slack_user", ev.User), zap.Error(err))
		h.refuse(ev, "watchdogd could not open the form (its ledger is unavailable): click again in a minute")
		return
	case refused != "":
		h.count("refused")
		h.refuse(ev, "watchdogd did nothing: "+refused)
		return
	}
	if err := h.Slack.OpenForm(ctx, ev.TriggerID, slack.Form(f, ev.Value, ev.Channel, ev.TS)); err != nil {
		h.count("failed")
		h.refuse(ev, "watchdogd could not open the form: "+term.OneLine(err))
		return
	}
	h.count("accepted")
}

// ErrNotReady is why a click is not taken yet: the ledger is not open.
var ErrNotReady = errors.New("watchdogd's ledger is not open yet")

// refuse tells the person who clicked why nothing was done, after the
// acknowledgement: not again while the same words to them in that channel
// are on their way, and never more than maxTelling waiting at once.
func (h *Handler) refuse(ev Event, text string) {
	key := ev.Channel + "\x00" + ev.User + "\x00" + text
	h.mu.Lock()
	if h.telling == nil {
		h.telling = map[string]bool{}
	}
	busy, full := h.telling[key], len(h.telling) >= maxTelling
	if !busy && !full {
		h.telling[key] = true
	}
	h.mu.Unlock()
	if busy || full {
		h.Log.Debug("not telling a person why their click did nothing: a reply is on its way already", zap.String("slack_user", ev.User), zap.Bool("too_many", full && !busy))
		return
	}
	h.later(func(ctx context.Context) {
		defer func() {
			h.mu.Lock()
			delete(h.telling, key)
			h.mu.Unlock()
		}()
		if err := h.Slack.Ephemeral(ctx, ev.Channel, ev.User, text); err != nil {
			h.Log.Warn("cannot tell a person why their click did nothing", zap.String("slack_user", ev.User), zap.Error(err))
		}
	})
}

// later runs f after the acknowledgement, under the handler's context.
func (h *Handler) later(f func(context.Context)) {
	base := h.base
	if base == nil {
		base = context.Background()
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		f(base)
	}()
}

func (h *Handler) count(result string) {
	if h.Count != nil {
		h.Count(result)
	}
}
