// Package words says a finding in words, once for every outlet that tells
// a person about it: what is wrong, on which task, who owes the next move
// and what to do. An outlet writes them for its medium through a Style:
// Slack escapes what agents wrote for mrkdwn and shows a moment as a date
// token each reader sees in their own zone; the zero Style is plain text
// with dates in UTC (Alertmanager's description).
package words

import (
	"fmt"
	"strings"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
)

// Style is how a medium writes what plain words cannot.
type Style struct {
	// Date writes moment t after a lead word ("since"); nil writes
	// "since Jan 2 15:04 UTC".
	Date func(lead string, t time.Time) string
	// Escape makes text kandev or an agent wrote inert where it is
	// printed; nil leaves it as it is.
	Escape func(string) string
}

func (s Style) date(lead string, t time.Time) string {
	if s.Date == nil {
		return lead + " " + Stamp(t)
	}
	return s.Date(lead, t)
}

func (s Style) escape(text string) string {
	if s.Escape == nil {
		return text
	}
	return s.Escape(text)
}

// Stamp is a moment as plain text, in UTC: "Jan 2 15:04 UTC".
func Stamp(t time.Time) string { return t.UTC().Format("Jan 2 15:04 UTC") }

// Sentence is a finding in plain words: its headline around the task's
// title, dates in UTC, no markup.
func Sentence(f scan.Finding) string {
	head, body := Headline(f, Style{})
	s := head + " " + term.TitleLabel(f.TaskTitle, f.TaskID) + "."
	if body != "" {
		s += " " + body
	}
	return s
}

// Headline is what is said of a finding around its task: head before the
// task's title ("Agent stalled 42 min on"), body after it, the sentences
// that say what kandev shows and what to do ("" for none).
func Headline(f scan.Finding, st Style) (head, body string) {
	age := term.Minutes(time.Duration(f.AgeSeconds) * time.Second)
	d := f.Detail
	if d == nil {
		d = &scan.Detail{}
	}
	switch f.Kind {
	case model.KindStalledTurn:
		last := ""
		if d.LastActivityAt != nil {
			if t, err := time.Parse(time.RFC3339Nano, *d.LastActivityAt); err == nil {
				last = "No output " + st.date("since", t)
				if d.LastActivityType != "" {
					last += " (last: " + st.escape(strings.ReplaceAll(d.LastActivityType, "_", " ")) + ")"
				}
				last += ". "
			}
		}
		return "Agent stalled " + age + " on", last + "kandev shows it running. Open the task to cancel the turn or nudge it."
	case model.KindNeverStarted:
		if f.TurnID == nil {
			return "Session stuck starting for " + age + " on", "kandev never opened a turn for it. Open the task to restart the session."
		}
		return "Agent never started on", "The turn opened " + age + " ago and produced no output at all."
	case model.KindUnansweredClarification:
		return "Question waiting " + age + " on", "Answer it in kandev."
	case model.KindShadowedClarification:
		return "Hidden question, asked " + age + " ago, on", "kandev does not show it after the agent was resumed, and answering it there will fail. " +
			"Reply in the session with your answer, or ask the agent to ask again."
	case model.KindPendingPermission:
		return "Agent waiting " + age + " for permission on", "Approve or deny it in kandev."
	case model.KindInterruptedSession:
		return interruptedText(d, age, st)
	case model.KindMultipleOpenTurns:
		return fmt.Sprintf("%d open turns", d.OpenTurns) + " on", "kandev keeps one turn open per session; the newest is treated as current."
	}
	return st.escape(string(f.Kind)) + " on", ""
}

// interruptedText says what left a session parked and what a person does
// about it: resume it, or send the lost message again. A permission kandev
// still shows on the closed turn is named, since granting it there fails.
// age is since the finding's since: the restart, or the answer to a
// question asked on the abandoned turn.
func interruptedText(d *scan.Detail, age string, st Style) (string, string) {
	closed := "kandev closed the turn " + age + " ago"
	if d.AnsweredAt != nil {
		closed = "kandev closed the turn"
		if at, err := time.Parse(time.RFC3339Nano, deref(d.RestartAt)); err == nil {
			closed += " " + st.date("on", at)
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
