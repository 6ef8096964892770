package model

import (
	"fmt"
	"strings"
	"time"
)

// Policy is one finding kind's escalation ladder, as the config's policy
// block writes it.
type Policy struct {
	Steps       []Step        `yaml:"steps"`
	RepeatEvery time.Duration `yaml:"repeat_every"`
	Resolve     *bool         `yaml:"resolve"`
	ResolveHold time.Duration `yaml:"resolve_hold"`
	Text        string        `yaml:"text"`
}

// ResolveEnabled says whether an episode that clears says so (the
// default): Slack's first message is edited, an alert ends, a webhook hears
// "resolved".
func (p *Policy) ResolveEnabled() bool { return p.Resolve == nil || *p.Resolve }

// Step is one rung: after a delay from the episode's since, do an action.
type Step struct {
	After   time.Duration `yaml:"after"`
	Action  ActionKind    `yaml:"action"`
	Mention bool          `yaml:"mention"`
	// Webhook names the webhook a webhook step posts to (the config fills
	// it in when only one exists).
	Webhook string `yaml:"webhook"`
}

// Destination names where an action of kind goes (channel is a Slack
// channel or a webhook's name): a Slack channel, a webhook, Alertmanager,
// kandev (a nudge and a cancel_and_nudge both act on the session), the log.
// A ladder's steps replace one another only at one destination: the newest
// due step to each goes out, so a Slack post and an alert due together
// both go.
func Destination(kind ActionKind, channel string) string {
	switch kind {
	case ActionNudge, ActionCancelAndNudge:
		return "kandev"
	case ActionSlack, ActionWebhook:
		return string(kind) + ":" + channel
	}
	return string(kind)
}

// DefaultPolicy is a kind's ladder when the config gives none: Slack for
// people, a log line for the invariant kandev broke. Automatic nudges are
// opt-in, so no default ladder nudges.
func DefaultPolicy(kind Kind) Policy {
	slack := func(after time.Duration, mention bool) Step {
		return Step{After: after, Action: ActionSlack, Mention: mention}
	}
	yes := true
	p := Policy{Resolve: &yes, Text: defaultText[kind]}
	switch kind {
	case KindUnansweredClarification, KindPendingPermission:
		p.Steps = []Step{slack(0, false), slack(time.Hour, true)}
		p.RepeatEvery = time.Hour
	case KindShadowedClarification:
		p.Steps = []Step{slack(0, true)}
		p.RepeatEvery = time.Hour
	case KindStalledTurn, KindNeverStarted:
		p.Steps = []Step{slack(0, false), slack(30*time.Minute, true)}
	case KindInterruptedSession:
		p.Steps = []Step{slack(0, false)}
	case KindMultipleOpenTurns:
		p.Steps = []Step{{Action: ActionLog}}
	}
	if !kind.Known() { // an episode a newer watchdogd opened: recorded, no more
		p.Steps = []Step{{Action: ActionLog}}
	}
	return p
}

// defaultText is what a nudge says to the agent, per kind.
var defaultText = map[Kind]string{
	KindStalledTurn:             "watchdogd: this turn has shown no output for a while. If you are blocked, say what you are waiting for; otherwise continue the task.",
	KindNeverStarted:            "watchdogd: this turn has produced no output since it started. Please begin the task, or say what is blocking you.",
	KindUnansweredClarification: "watchdogd: your question is still unanswered. If you can proceed with a reasonable assumption, state it and continue.",
	KindShadowedClarification:   "watchdogd: your last question is not visible to the user in kandev. Please ask it again so it can be answered.",
	KindPendingPermission:       "watchdogd: your permission request is still pending.",
	KindInterruptedSession:      "watchdogd: this session was interrupted by a kandev restart. Please resume the task where you left off.",
	KindMultipleOpenTurns:       "watchdogd: this session has more than one open turn.",
}

// Routing is where Slack steps go: the first route whose match holds, else
// the default channel and mention.
type Routing struct {
	DefaultChannel string
	DefaultMention string
	Routes         []Route
	// Allowed are who may act from Slack on messages no route with its own
	// lists sent (slack.interactivity's lists).
	Allowed Actors
}

// Route sends matching episodes to a channel. Its allowed lists, when
// either is set, replace slack.interactivity's: who may act from Slack on
// the messages it sends.
type Route struct {
	Match             Match    `yaml:"match"`
	Channel           string   `yaml:"channel"`
	Mention           string   `yaml:"mention"`
	AllowedUsers      []string `yaml:"allowed_users"`
	AllowedUsergroups []string `yaml:"allowed_usergroups"`
}

// Actors are who may act from Slack: users by id (U…, W…), and the
// members of user groups (S…). Empty, nobody may.
type Actors struct {
	Users      []string
	Usergroups []string
}

// Match selects episodes; empty fields match anything.
type Match struct {
	WorkspaceID string `yaml:"workspace_id"`
	TaskID      string `yaml:"task_id"`
	SessionID   string `yaml:"session_id"`
	Kind        Kind   `yaml:"kind"`
}

// QuietHours defer Slack steps inside a daily window.
type QuietHours struct {
	Timezone string    `yaml:"timezone"`
	Start    ClockTime `yaml:"start"`
	End      ClockTime `yaml:"end"`
	Days     []string  `yaml:"days"`
	// Location is Timezone loaded, set when the config is validated: a
	// storm asks for every due action whether it is quiet, and loading the
	// zone reads tzdata each time.
	Location *time.Location `yaml:"-"`
}

// ClockTime is a time of day, "HH:MM".
type ClockTime struct {
	Set     bool
	Minutes int // since midnight
}

// UnmarshalText reads HH:MM, 00:00 to 23:59.
func (c *ClockTime) UnmarshalText(b []byte) error {
	s := string(b)
	var h, m int
	if _, err := fmt.Sscanf(s, "%d:%d", &h, &m); err != nil || len(s) != 5 || h < 0 || h > 23 || m < 0 || m > 59 {
		return fmt.Errorf("%q is not a time of day (HH:MM, 00:00 to 23:59)", s)
	}
	c.Set, c.Minutes = true, h*60+m
	return nil
}

// String prints HH:MM.
func (c ClockTime) String() string { return fmt.Sprintf("%02d:%02d", c.Minutes/60, c.Minutes%60) }

var weekdays = map[string]time.Weekday{"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday, "thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday}

// Weekday parses a quiet-hours day name (sun … sat, any case).
func Weekday(s string) (time.Weekday, bool) {
	d, ok := weekdays[strings.ToLower(s)]
	return d, ok
}
