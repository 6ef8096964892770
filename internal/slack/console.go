package slack

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	slackapi "github.com/slack-go/slack"

	"github.com/watchdogd/watchdogd/internal/term"
)

// Console prints what would be sent instead of sending it (`watchdogd
// demo`, `run --dry-run`). It stands in for both Slack and kandev. What
// it prints is escaped for the terminal (term): a message carries what
// agents wrote, and ids come from kandev.
type Console struct {
	mu  sync.Mutex
	w   io.Writer
	seq int
}

// NewConsole prints to w.
func NewConsole(w io.Writer) *Console { return &Console{w: w} }

// Post prints a message.
func (c *Console) Post(_ context.Context, channel, threadTS, _ string, m Message) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	where := "Slack " + term.Escape(channel)
	if threadTS != "" {
		where += " (thread reply)"
	}
	fmt.Fprintf(c.w, "→ %s:\n%s\n", where, indent(term.EscapeLines(PlainText(m))))
	return fmt.Sprintf("console.%d", c.seq), nil
}

// Update prints an edit.
func (c *Console) Update(_ context.Context, channel, ts string, m Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.w, "✎ Slack %s, edit of %s:\n%s\n", term.Escape(channel), term.Escape(ts), indent(term.EscapeLines(PlainText(m))))
	return nil
}

// AddMessage prints a nudge.
func (c *Console) AddMessage(_ context.Context, taskID, sessionID, content, _ string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.w, "→ kandev message.add to session %s (task %s):\n%s\n", term.Escape(sessionID), term.Escape(taskID), indent(term.EscapeLines(content)))
	return nil
}

// Cancel prints a turn cancel.
func (c *Console) Cancel(_ context.Context, sessionID string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.w, "→ kandev agent.cancel of session %s\n", term.Escape(sessionID))
	return nil
}

// PlainText flattens a message's blocks for a terminal, dates in UTC.
func PlainText(m Message) string {
	var lines []string
	for _, b := range m.Blocks.BlockSet {
		switch v := b.(type) {
		case *slackapi.SectionBlock:
			if v.Text != nil {
				lines = append(lines, v.Text.Text)
			}
		case *slackapi.ContextBlock:
			for _, e := range v.ContextElements.Elements {
				if t, ok := e.(*slackapi.TextBlockObject); ok {
					lines = append(lines, t.Text)
				}
			}
		}
	}
	if len(lines) == 0 {
		return m.Text
	}
	return fallbackDates(strings.ReplaceAll(strings.Join(lines, "\n"), "\u200b", ""))
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
