// Package logline delivers log actions: a line in watchdogd's own log,
// for a kind whose ladder only records (multiple_open_turns by default),
// and for Slack steps when the config has no slack: block.
package logline

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
)

// Outlet writes log actions to the protocol's log, with the action's key,
// kind, session and turn. Register it for model.ActionLog (fenced).
type Outlet struct{}

// Render freezes the line: the finding in words, its task, session and age.
func (o *Outlet) Render(r notify.Rendering) (string, error) {
	return notify.EncodeText(Line(r.Finding)), nil
}

// Send writes the line.
func (o *Outlet) Send(_ context.Context, at notify.Attempt) notify.Sent {
	at.Logger().Warn("watchdogd finding", zap.String("text", notify.DecodeText(at.Action.Body)), zap.String("task_id", at.Episode.TaskID))
	return notify.Delivered("", "")
}

// Preview is the line, escaped for a terminal on one line: a newline in
// a title is shown as \n, never begins a line.
func (o *Outlet) Preview(a model.Action, _ model.Episode, _ string) (string, error) {
	return "→ log: " + term.Escape(notify.DecodeText(a.Body)), nil
}

// Line is a finding in one line of words.
func Line(f scan.Finding) string {
	return model.KindWords(f.Kind) + " on " + f.TaskTitle + " (session " + f.SessionID + ", " +
		term.Minutes(time.Duration(f.AgeSeconds)*time.Second) + ")"
}
