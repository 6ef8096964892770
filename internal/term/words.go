package term

import (
	"fmt"
	"strings"
	"time"
)

// TitleLabel is how a task is named to people: its title on one line, or
// its id when kandev has no title for it. A link whose label is empty is
// invisible, in Slack and on the status page alike, and a line break
// inside Slack's <url|label> breaks the link.
func TitleLabel(title, taskID string) string {
	if t := strings.Join(strings.Fields(title), " "); t != "" {
		return t
	}
	return "task " + taskID
}

// Minutes prints a duration for messages: "42 min", "1 h 10 min", "2 d 3 h".
func Minutes(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d/time.Minute))
	case d < 24*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%d h", h)
		}
		return fmt.Sprintf("%d h %d min", h, m)
	}
	days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	return fmt.Sprintf("%d d %d h", days, h)
}

// Indent indents every line of s by four spaces: a message under the line
// that says where it goes.
func Indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
