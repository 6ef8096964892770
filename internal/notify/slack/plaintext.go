package slack

import (
	"strings"

	slackapi "github.com/slack-go/slack"
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
