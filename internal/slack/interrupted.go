package slack

import (
	"strings"
	"time"

	"github.com/watchdogd/watchdogd/internal/scan"
)

// interruptedText says what left a session parked and what a person does
// about it: resume it, or send the lost message again. A permission kandev
// still shows on the closed turn is named, since granting it there fails.
// age is since the finding's since: the restart, or the answer to a
// question asked on the abandoned turn.
func interruptedText(d *scan.Detail, age string) (string, string) {
	closed := "kandev closed the turn " + age + " ago"
	if d.AnsweredAt != nil {
		closed = "kandev closed the turn"
		if at, err := time.Parse(time.RFC3339Nano, deref(d.RestartAt)); err == nil {
			closed += " " + slackDate("on", at)
		}
	}
	answered := ""
	if d.AnsweredAt != nil {
		answered = " A question on it was answered " + age + " ago, and no agent has picked the session up since."
	}
	head, body := "Session parked by a kandev restart "+age+" ago on", "No agent has replied since. Open it to resume."
	switch d.Interruption {
	case scan.InterruptionRestart:
		if d.AnsweredAt != nil {
			head, body = "Session parked by a kandev restart on", strings.TrimSpace(answered)+" Open it to resume."
		}
	case scan.InterruptionDroppedPrompt:
		head = "Last message never answered on"
		body = closed + " without a reply from the agent (a restart while it ran?) and shows the session idle. " +
			"Resume the session or send the message again."
	case scan.InterruptionLostPermission:
		body = closed + " while the agent waited for a permission (a restart while it ran?). " +
			"kandev still shows the request, but it can no longer be granted: resume the session for the agent to ask again."
		if d.LostPermission != nil && d.LostPermission.Status == "expired" {
			body = closed + " while the agent waited for a permission (a restart while it ran?), and marked the request expired " +
				"when granting it failed. The session is still dead: resume it for the agent to ask again."
		}
		return "Permission request lost on", body
	case scan.InterruptionAbandoned:
		next := " No agent has replied since: open the session to resume it."
		if answered != "" {
			next = answered + " Open the session to resume it."
		}
		return "Turn abandoned on", closed + " without the agent finishing it (a kandev restart?), and kandev shows the session idle." + next
	}
	switch {
	case d.LostPermission != nil && d.LostPermission.Status == "expired":
		body += " The permission the agent asked for before that was marked expired when granting it failed: " +
			"the session must be resumed for the agent to ask again."
	case d.LostPermission != nil:
		body += " kandev still shows the permission the agent asked for before that, but it can no longer be granted: " +
			"the session must be resumed for the agent to ask again."
	}
	return head, body
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
