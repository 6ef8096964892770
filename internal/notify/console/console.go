// Package console prints what actions would send instead of sending them
// (`watchdogd demo`, `run --dry-run`): every outlet of a registry is
// wrapped so that it renders as itself and prints on Send. Each outlet
// says what its actions do (notify.Previewer); the console numbers them
// and escapes what it prints itself for the terminal.
package console

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/term"
)

// Printer prints actions to one writer, each as its outlet in a registry
// previews it.
type Printer struct {
	mu      sync.Mutex
	w       io.Writer
	outlets notify.Registry
	seq     int
}

// New prints to w what the outlets of reg would do.
func New(w io.Writer, reg notify.Registry) *Printer { return &Printer{w: w, outlets: reg} }

// Outlets returns the registry with each outlet rendering as it does and
// printing instead of sending.
func (p *Printer) Outlets() notify.Registry {
	out := notify.Registry{}
	for kind, e := range p.outlets {
		e.Outlet = outlet{inner: e.Outlet, p: p}
		out.Register(kind, e)
	}
	return out
}

// outlet renders through inner and prints.
type outlet struct {
	inner notify.Outlet
	p     *Printer
}

func (o outlet) Render(r notify.Rendering) (string, error) { return o.inner.Render(r) }

func (o outlet) Send(_ context.Context, at notify.Attempt) notify.Sent {
	parent := ""
	if at.Parent != nil {
		parent = at.Parent.ResultTS
	}
	ts, err := o.p.Print(at.Action, at.Episode, parent)
	if err != nil {
		return notify.Failed(err.Error())
	}
	return notify.Delivered(at.Action.Channel, ts)
}

// Print prints what action a of episode e does; parent names the first
// message a reply goes under or an edit changes ("" for none). It returns
// the message's id in the console.
func (p *Printer) Print(a model.Action, e model.Episode, parent string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	text := "→ " + term.Escape(string(a.Kind)) + ":\n" + term.Indent(term.EscapeLines(a.Body))
	if pv, ok := p.outlets[a.Kind].Outlet.(notify.Previewer); ok {
		var err error
		if text, err = pv.Preview(a, e, parent); err != nil {
			return "", fmt.Errorf("preview %s action %s: %w", a.Kind, a.Key, err)
		}
	}
	p.seq++
	fmt.Fprintln(p.w, text)
	return fmt.Sprintf("console.%d", p.seq), nil
}
