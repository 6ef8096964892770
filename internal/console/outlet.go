// Package console prints what actions would send instead of sending them
// (`watchdogd demo`, `run --dry-run`): every outlet of a registry is
// wrapped so that it renders as itself and prints on Send. What it prints
// is escaped for the terminal: a message carries what agents wrote, and ids
// come from kandev.
package console

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/watchdogd/watchdogd/internal/deliver"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/slack"
	"github.com/watchdogd/watchdogd/internal/term"
)

// Printer prints actions to one writer.
type Printer struct {
	mu  sync.Mutex
	w   io.Writer
	seq int
}

// New prints to w.
func New(w io.Writer) *Printer { return &Printer{w: w} }

// Wrap returns reg with each outlet rendering as it does and printing
// instead of sending.
func (p *Printer) Wrap(reg deliver.Registry) deliver.Registry {
	out := deliver.Registry{}
	for kind, e := range reg {
		e.Outlet = outlet{inner: e.Outlet, p: p}
		out.Register(kind, e)
	}
	return out
}

// outlet renders through inner and prints.
type outlet struct {
	inner deliver.Outlet
	p     *Printer
}

func (o outlet) Render(r deliver.Rendering) (string, error) { return o.inner.Render(r) }

func (o outlet) Send(_ context.Context, at deliver.Attempt) deliver.Sent {
	ts, err := o.p.Print(at.Action, at.Episode, at.Parent != nil)
	if err != nil {
		return deliver.Failed(err.Error())
	}
	return deliver.Delivered(at.Action.Channel, ts)
}

// Print prints what action a of episode e says; inThread says a reply goes
// in the first message's thread. It returns the message's id in the
// console.
func (p *Printer) Print(a model.Action, e model.Episode, inThread bool) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	switch a.Kind {
	case model.ActionSlack, model.ActionSlackUpdate:
		m, err := slack.DecodeMessage(a.Body)
		if err != nil {
			return "", err
		}
		where := "→ Slack " + term.Escape(a.Channel)
		switch {
		case a.Kind == model.ActionSlackUpdate:
			where = "✎ Slack " + term.Escape(a.Channel) + ", edit of the first message"
		case inThread:
			where += " (thread reply)"
		}
		fmt.Fprintf(p.w, "%s:\n%s\n", where, indent(term.EscapeLines(slack.PlainText(m))))
	case model.ActionNudge, model.ActionCancelAndNudge:
		if a.Kind == model.ActionCancelAndNudge {
			fmt.Fprintf(p.w, "→ kandev agent.cancel of session %s\n", term.Escape(e.SessionID))
		}
		fmt.Fprintf(p.w, "→ kandev message.add to session %s (task %s):\n%s\n", term.Escape(e.SessionID), term.Escape(e.TaskID),
			indent(term.EscapeLines(deliver.DecodeText(a.Body))))
	case model.ActionLog:
		fmt.Fprintf(p.w, "→ log: %s\n", term.EscapeLines(deliver.DecodeText(a.Body)))
	default:
		fmt.Fprintf(p.w, "→ %s:\n%s\n", term.Escape(string(a.Kind)), indent(term.EscapeLines(a.Body)))
	}
	return fmt.Sprintf("console.%d", p.seq), nil
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
