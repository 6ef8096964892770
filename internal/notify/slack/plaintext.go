package slack

import (
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
)

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

// Words is a finding in the plain words of its Slack message, for outlets
// that are not Slack (Alertmanager's description): what is wrong, on which
// task, and what to do — no markup, dates in UTC.
func Words(f scan.Finding) string {
	head, body := headline(f, term.Minutes(time.Duration(f.AgeSeconds)*time.Second))
	s := unmarkdown(head) + " " + term.TitleLabel(f.TaskTitle, f.TaskID) + "."
	if body != "" {
		s += " " + unmarkdown(body)
	}
	return s
}

// unmarkdown undoes what rendering does to text for mrkdwn: entities,
// the zero-width spaces before formatting characters, date tokens.
func unmarkdown(s string) string {
	s = fallbackDates(strings.ReplaceAll(s, "\u200b", ""))
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}
