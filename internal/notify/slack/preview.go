package slack

import (
	"fmt"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/term"
)

// Preview says where a Slack action goes (a top-level post, a reply in
// parent's thread, or the edit of parent) and the message as Slack would
// show it, as plain text escaped for a terminal.
func (o *Outlet) Preview(a model.Action, _ model.Episode, parent string) (string, error) {
	m, err := DecodeMessage(a.Body)
	if err != nil {
		return "", err
	}
	where := "→ Slack " + term.Escape(a.Channel)
	switch {
	case a.Kind == model.ActionSlackUpdate:
		where = "✎ Slack " + term.Escape(a.Channel) + ", edit of " + term.Escape(parent)
	case parent != "":
		where += " (thread reply)"
	}
	return fmt.Sprintf("%s:\n%s", where, term.Indent(term.EscapeLines(PlainText(m)))), nil
}
