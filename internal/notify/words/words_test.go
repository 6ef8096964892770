package words

import (
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// TestSentence: a finding in plain words, as outlets that are not Slack
// say it: what agents wrote stays as they wrote it (no entities, no
// zero-width spaces), dates in UTC, the task named by its title or id.
func TestSentence(t *testing.T) {
	last := "2026-12-03T11:18:30.5Z"
	for _, c := range []struct {
		name string
		f    scan.Finding
		want string
	}{
		{"stalled, with its last output named as the agent wrote it",
			scan.Finding{Kind: model.KindStalledTurn, TaskTitle: "Fix <login> & *auth*", AgeSeconds: 42 * 60,
				Detail: &scan.Detail{LastActivityAt: &last, LastActivityType: "tool_call<x>"}},
			"Agent stalled 42 min on Fix <login> & *auth*. No output since Dec 3 11:18 UTC (last: tool call<x>). " +
				"kandev shows it running. Open the task to cancel the turn or nudge it."},
		{"a question, no title: the task's id",
			scan.Finding{Kind: model.KindUnansweredClarification, TaskID: "t1", AgeSeconds: 300},
			"Question waiting 5 min on task t1. Answer it in kandev."},
		{"a parked session that still shows a permission",
			scan.Finding{Kind: model.KindInterruptedSession, TaskTitle: "T", AgeSeconds: 600, Detail: &scan.Detail{LostPermission: &scan.LostPermission{}}},
			"Session parked by a kandev restart 10 min ago on T. No agent has replied since. Open it to resume. kandev still shows the permission " +
				"the agent asked for before that, but it can no longer be granted: the session must be resumed for the agent to ask again."},
		{"a kind these words do not know: its name",
			scan.Finding{Kind: "odd_<kind>", TaskTitle: "T"},
			"odd_<kind> on T."},
	} {
		if got := Sentence(c.f); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// TestHeadlineStyle: a medium's style writes the moments and what kandev
// or an agent wrote (the last output's type, a kind's name), and nothing
// of watchdogd's own words.
func TestHeadlineStyle(t *testing.T) {
	st := Style{Date: func(lead string, t time.Time) string { return "<" + lead + " " + t.Format(time.Kitchen) + ">" },
		Escape: func(s string) string { return "[" + s + "]" }}
	last := "2026-12-03T11:18:00Z"
	head, body := Headline(scan.Finding{Kind: model.KindStalledTurn, AgeSeconds: 60,
		Detail: &scan.Detail{LastActivityAt: &last, LastActivityType: "tool_call"}}, st)
	if head != "Agent stalled 1 min on" || !strings.HasPrefix(body, "No output <since 11:18AM> (last: [tool call]). kandev shows") {
		t.Errorf("stalled: %q / %q", head, body)
	}
	if head, _ := Headline(scan.Finding{Kind: "odd"}, st); head != "[odd] on" {
		t.Errorf("unknown kind: %q", head)
	}
}

// TestEveryKindHasHeadline: a kind added to model.Kinds fails here until
// it has words of its own.
func TestEveryKindHasHeadline(t *testing.T) {
	for _, k := range model.Kinds {
		if head, _ := Headline(scan.Finding{Kind: k}, Style{}); head == string(k)+" on" {
			t.Errorf("%s has no headline: %q", k, head)
		}
	}
}
