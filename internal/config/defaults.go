package config

import (
	"time"
)

// Finding kinds (the policy map's keys); mirrors internal/scan.
var kinds = []string{
	"unanswered_clarification", "shadowed_clarification", "pending_permission",
	"never_started", "stalled_turn", "interrupted_session", "multiple_open_turns",
}

// Actions a step may take.
const (
	ActionSlack          = "slack"
	ActionNudge          = "nudge"
	ActionCancelAndNudge = "cancel_and_nudge"
	ActionLog            = "log"
)

// HumanOwesAnswer says whether a finding kind waits on a person's answer
// that kandev still takes: a question on kandev's current turn, or a
// permission request on an open turn. A nudge there destroys it: kandev
// stores it in the blocked turn, stops the agent and resumes it with the
// nudge as its prompt, and the question leaves kandev's UI and API while
// its row still says pending. So no config may nudge one (validate) and
// no decision does (internal/policy).
func HumanOwesAnswer(kind string) bool {
	return kind == "unanswered_clarification" || kind == "pending_permission"
}

// DefaultPolicy is the default ladder for a kind. Automatic nudges are
// opt-in, so no default ladder nudges.
func DefaultPolicy(kind string) Policy {
	slack := func(after time.Duration, mention bool) Step {
		return Step{After: after, Action: ActionSlack, Mention: mention}
	}
	yes := true
	p := Policy{Resolve: &yes, Text: defaultText[kind]}
	switch kind {
	case "unanswered_clarification", "pending_permission":
		p.Steps = []Step{slack(0, false), slack(time.Hour, true)}
		p.RepeatEvery = time.Hour
	case "shadowed_clarification":
		p.Steps = []Step{slack(0, true)}
		p.RepeatEvery = time.Hour
	case "stalled_turn", "never_started":
		p.Steps = []Step{slack(0, false), slack(30*time.Minute, true)}
	case "interrupted_session":
		p.Steps = []Step{slack(0, false)}
	default: // multiple_open_turns
		p.Steps = []Step{{Action: ActionLog}}
	}
	return p
}

// defaultText is what a nudge says to the agent, per kind.
var defaultText = map[string]string{
	"stalled_turn":             "watchdogd: this turn has shown no output for a while. If you are blocked, say what you are waiting for; otherwise continue the task.",
	"never_started":            "watchdogd: this turn has produced no output since it started. Please begin the task, or say what is blocking you.",
	"unanswered_clarification": "watchdogd: your question is still unanswered. If you can proceed with a reasonable assumption, state it and continue.",
	"shadowed_clarification":   "watchdogd: your last question is not visible to the user in kandev. Please ask it again so it can be answered.",
	"pending_permission":       "watchdogd: your permission request is still pending.",
	"interrupted_session":      "watchdogd: this session was interrupted by a kandev restart. Please resume the task where you left off.",
	"multiple_open_turns":      "watchdogd: this session has more than one open turn.",
}

func applyDefaults(c *Config) {
	setDur(&c.Database.ScanTimeout, 30*time.Second)
	setDur(&c.Database.BusyTimeout, 5*time.Second)
	setDur(&c.CycleTimeout, 2*time.Minute)
	setStr(&c.Kandev.BaseURL, "http://localhost:38429")
	setStr(&c.Kandev.CurrentTurnRule, "pre_spec")
	setStr(&c.Schedule, "@every 1m")
	setDur(&c.Thresholds.StallAfter, 15*time.Minute)
	setDur(&c.Thresholds.NeverStartedAfter, 10*time.Minute)
	setDur(&c.Thresholds.ClarificationAfter, 15*time.Minute)
	setDur(&c.Thresholds.PermissionAfter, 15*time.Minute)
	setDur(&c.Thresholds.InterruptedAfter, 10*time.Minute)
	setDur(&c.Thresholds.FutureTolerance, 2*time.Minute)
	if c.Policy == nil {
		c.Policy = map[string]*Policy{}
	}
	for _, k := range kinds {
		def := DefaultPolicy(k)
		p, ok := c.Policy[k]
		if !ok || p == nil {
			c.Policy[k] = &def
			continue
		}
		if p.Steps == nil {
			p.Steps, p.RepeatEvery = def.Steps, orDur(p.RepeatEvery, def.RepeatEvery)
		}
		if p.Resolve == nil {
			p.Resolve = def.Resolve
		}
		setStr(&p.Text, def.Text)
	}
	setStr(&c.State.URL, "sqlite://watchdogd-state.db")
	setDur(&c.State.ClaimTTL, 2*time.Minute)
	setDur(&c.State.Retention, 720*time.Hour)
	if c.Slack != nil {
		setStr(&c.Slack.APIURL, "https://slack.com/api/")
		setDur(&c.Slack.Timeout, 10*time.Second)
		if c.Slack.MaxMessagesPerCycle == 0 {
			c.Slack.MaxMessagesPerCycle = 20
		}
	}
	setDur(&c.HA.LeaseTTL, 30*time.Second)
	setStr(&c.HTTP.Listen, "127.0.0.1:9464")
	if c.HTTP.UI == nil {
		yes := true
		c.HTTP.UI = &yes
	}
	setStr(&c.Log.Level, "info")
}

func setDur(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}

func orDur(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func setStr(s *string, def string) {
	if *s == "" {
		*s = def
	}
}

// UIEnabled reports whether the status page and API are served.
func (c *Config) UIEnabled() bool { return c.HTTP.UI == nil || *c.HTTP.UI }

// ResolveEnabled reports whether a kind's resolves edit the first message.
func (p *Policy) ResolveEnabled() bool { return p.Resolve == nil || *p.Resolve }
