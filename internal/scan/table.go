package scan

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/term"
)

// WriteTable prints the report for people: one line per finding, oldest
// first, with the age in human units and the task title. What kandev holds
// is escaped (term.Escape): a title's ESC sequence or newline would
// otherwise act on the terminal or forge a row.
func WriteTable(w io.Writer, rep Report) error {
	if len(rep.Findings) == 0 {
		_, err := fmt.Fprintf(w, "No findings in %d active session%s.\n", len(rep.Sessions), plural(len(rep.Sessions)))
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGE\tKIND\tTASK\tSESSION\tWHAT")
	for _, f := range rep.Findings {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", HumanAge(time.Duration(f.AgeSeconds)*time.Second), f.Kind,
			clip(oneLine(term.Escape(f.TaskTitle)), 40), term.Escape(f.SessionID), clip(oneLine(term.Escape(what(f))), 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d finding%s in %d active session%s.\n", len(rep.Findings), plural(len(rep.Findings)), len(rep.Sessions), plural(len(rep.Sessions)))
	return err
}

// what is a short description of the evidence.
func what(f Finding) string {
	d := f.Detail
	switch f.Kind {
	case model.KindUnansweredClarification, model.KindShadowedClarification:
		if d != nil && len(d.Questions) > 0 {
			q := d.Questions[0]
			text := q.Title
			if text == "" {
				text = q.Prompt
			}
			if f.Kind == model.KindShadowedClarification {
				return "hidden in kandev: " + text
			}
			return text
		}
	case model.KindPendingPermission:
		if d != nil {
			return d.Permission
		}
	case model.KindStalledTurn:
		if d != nil && d.LastActivityType != "" {
			return "last output: " + d.LastActivityType
		}
	case model.KindNeverStarted:
		if f.TurnID == nil {
			return "session never got a turn"
		}
		return "no agent output in the turn"
	case model.KindInterruptedSession:
		return "parked by a kandev restart, nothing queued"
	case model.KindMultipleOpenTurns:
		if d != nil {
			return fmt.Sprintf("%d open turns", d.OpenTurns)
		}
	}
	return ""
}

// HumanAge prints a duration the way people say it: 45s, 42m, 1h10m, 2d3h.
func HumanAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	}
	days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	if h == 0 {
		return fmt.Sprintf("%dd", days)
	}
	return fmt.Sprintf("%dd%dh", days, h)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
