package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/watchdogd/watchdogd/internal/kandevtime"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/term"
)

// showInteractions prints an episode's clicks in Slack, oldest first: who
// asked for what, when, and how it ended (kandev's refusal or whoever
// answered first is the error). Nothing when there were none.
func showInteractions(w io.Writer, e model.Episode) error {
	var clicks []model.Action
	for _, a := range e.Actions {
		if strings.HasPrefix(a.Seq, "click/") {
			clicks = append(clicks, a)
		}
	}
	if len(clicks) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "INTERACTIONS (Slack)")
	fmt.Fprintln(tw, "WHEN\tWHO\tWHAT\tOUTCOME\tERROR")
	for _, a := range clicks {
		b, err := model.DecodeClick(a.Body)
		what := string(a.Kind)
		if err == nil && b.What != "" {
			what += ": " + b.What
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", kandevtime.RFC3339(a.CreatedAt), term.Escape(b.User), term.Escape(what), a.State, term.Escape(a.Error))
	}
	return tw.Flush()
}
