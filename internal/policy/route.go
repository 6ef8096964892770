package policy

import (
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// Route picks an episode's Slack channel and mention: the first matching
// route wins, else slack.default_channel with slack.default_mention.
func Route(s model.Routing, e model.Episode) (channel, mention string) {
	for _, r := range s.Routes {
		if Matches(r.Match, e) {
			return r.Channel, r.Mention
		}
	}
	return s.DefaultChannel, s.DefaultMention
}

// Matches reports whether a route's match selects an episode; empty
// fields match anything. Routes match on equality only; silences take
// Alertmanager's matchers (Silence.Matchers).
func Matches(m model.Match, e model.Episode) bool {
	return (m.WorkspaceID == "" || m.WorkspaceID == e.WorkspaceID) &&
		(m.TaskID == "" || m.TaskID == e.TaskID) &&
		(m.SessionID == "" || m.SessionID == e.SessionID) &&
		(m.Kind == "" || m.Kind == e.Kind)
}

// Silence is an active mute from the config or the ledger.
type Silence struct {
	ID string
	// Matchers are Alertmanager's: every one must hold (no matchers
	// match nothing).
	Matchers model.Matchers
	// Identity, set on a click's silence, is the episode clicked: it is
	// muted too, whatever kind it turns to.
	Identity string
	Until    time.Time
	Comment  string
}

// Holds says whether the silence mutes episode e at now.
func (s Silence) Holds(e model.Episode, now time.Time) bool {
	return now.Before(s.Until) && (s.Matchers.Matches(e) || s.Identity != "" && s.Identity == e.Identity)
}

// Deferred says whether a Slack action of episode e waits at now, and why:
// a matching unexpired silence, or quiet hours. Deferred actions stay
// pending; nothing is dropped.
func Deferred(e model.Episode, silences []Silence, q *model.QuietHours, now time.Time) (bool, string) {
	for _, s := range silences {
		if s.Holds(e, now) {
			return true, "silenced until " + s.Until.UTC().Format(time.RFC3339)
		}
	}
	if Quiet(q, now) {
		return true, "quiet hours"
	}
	return false, ""
}

// Quiet reports whether now falls inside the quiet-hours window. A window
// whose start is after its end wraps midnight and belongs to the day it
// started on.
func Quiet(q *model.QuietHours, now time.Time) bool {
	if q == nil || !q.Start.Set || !q.End.Set {
		return false
	}
	loc := q.Location
	if loc == nil { // built by hand, not loaded
		var err error
		if loc, err = time.LoadLocation(q.Timezone); err != nil {
			loc = time.UTC // validated at load; a missing tzdata entry must not mute
		}
	}
	t := now.In(loc)
	minute := t.Hour()*60 + t.Minute()
	start, end := q.Start.Minutes, q.End.Minutes
	switch {
	case start < end:
		return minute >= start && minute < end && onDay(q.Days, t.Weekday())
	case minute >= start:
		return onDay(q.Days, t.Weekday())
	case minute < end:
		return onDay(q.Days, t.AddDate(0, 0, -1).Weekday())
	}
	return false
}

func onDay(days []string, d time.Weekday) bool {
	if len(days) == 0 {
		return true
	}
	for _, s := range days {
		if w, ok := model.Weekday(s); ok && w == d {
			return true
		}
	}
	return false
}
