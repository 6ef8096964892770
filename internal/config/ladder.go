package config

import (
	"fmt"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// Warnings are what check-config says of a valid config that will not do
// what it reads like, each as "file:line: field: problem"; the daemon logs
// them at start and on reload.
func (c *Config) Warnings() []string { return c.warnings }

// ladderWarnings finds, in every kind's ladder (the configured one or the
// default), a step that can only ever be due together with an earlier step
// to the same destination. A step's after counts from when the condition
// began (a stall from the agent's last output, a question from its
// asking), and the finding exists only from the kind's threshold on: every
// step whose after is at or below the threshold is due the moment the
// episode opens. Only the newest due step to a destination goes out, so
// the earlier one never does. Steps to other destinations are not
// concerned: each destination gets its own newest.
func ladderWarnings(c *Config, d *decoder) {
	for _, kind := range model.Kinds {
		_, configured := d.lines["policy."+string(kind)]
		p := c.Policy[kind]
		if p == nil {
			def := model.DefaultPolicy(kind)
			p = &def
		}
		field, threshold := kindThreshold(c.Thresholds, kind)
		for j, s := range p.Steps {
			i := earlierTo(p.Steps, j)
			if i < 0 || s.After > threshold {
				continue
			}
			outcome := fmt.Sprintf("it is due as soon as the episode opens, together with steps[%d] (both to %s), and only steps[%d] is sent there: steps[%d] never is",
				i, destinationWords(s), j, i)
			if configured {
				d.warn(fmt.Sprintf("policy.%s.steps[%d].after", kind, j), "%s is at or below %s (%s), and after counts from when the condition began: %s; "+
					"raise this after above %s to send both", dur(s.After), field, dur(threshold), outcome, dur(threshold))
				continue
			}
			d.warn(field, "%s is at or above the after of the default ladder's steps[%d] for %s (%s), which counts from when the condition began: %s; "+
				"configure policy.%s to send both", dur(threshold), j, kind, dur(s.After), outcome, kind)
		}
	}
}

// earlierTo is the nearest step before j to the same destination, -1 when
// none.
func earlierTo(steps []model.Step, j int) int {
	dest := stepDestination(steps[j])
	for i := j - 1; i >= 0; i-- {
		if stepDestination(steps[i]) == dest {
			return i
		}
	}
	return -1
}

// stepDestination is where a configured step goes: every Slack step of an
// episode goes to its route's one channel.
func stepDestination(s model.Step) string {
	channel := ""
	if s.Action == model.ActionWebhook {
		channel = s.Webhook
	}
	return model.Destination(s.Action, channel)
}

func destinationWords(s model.Step) string {
	switch s.Action {
	case model.ActionSlack:
		return "Slack"
	case model.ActionWebhook:
		return "webhook " + s.Webhook
	case model.ActionAlertmanager:
		return "Alertmanager"
	case model.ActionNudge, model.ActionCancelAndNudge:
		return "kandev"
	}
	return "the log"
}

// kindThreshold is the threshold a kind's finding waits for, and its key.
// Two open turns are a finding at once.
func kindThreshold(t Thresholds, kind model.Kind) (string, time.Duration) {
	switch kind {
	case model.KindStalledTurn:
		return "thresholds.stall_after", t.StallAfter
	case model.KindNeverStarted:
		return "thresholds.never_started_after", t.NeverStartedAfter
	case model.KindUnansweredClarification, model.KindShadowedClarification:
		return "thresholds.clarification_after", t.ClarificationAfter
	case model.KindPendingPermission:
		return "thresholds.permission_after", t.PermissionAfter
	case model.KindInterruptedSession:
		return "thresholds.interrupted_after", t.InterruptedAfter
	}
	return "the finding's threshold", 0
}

// warn records a warning at the line where path (or its nearest set
// parent) was written.
func (d *decoder) warn(path, format string, args ...any) {
	line := 0
	for p := path; p != ""; p = parentPath(p) {
		if l, ok := d.lines[p]; ok {
			line = l
			break
		}
	}
	d.warnings = append(d.warnings, Problem{Line: line, Field: path, Msg: oneLine(fmt.Sprintf(format, args...))})
}
