package config

import (
	"fmt"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

func applyDefaults(c *Config) {
	setDur(&c.Database.ScanTimeout, 30*time.Second)
	setDur(&c.Database.BusyTimeout, 5*time.Second)
	setDur(&c.CycleTimeout, 2*time.Minute)
	setStr(&c.Kandev.BaseURL, "http://localhost:38429")
	setStr(&c.Kandev.CurrentTurnRule, "pre_spec")
	setDur(&c.Kandev.Timeout, 15*time.Second)
	setStr(&c.Schedule, "@every 1m")
	setDur(&c.Thresholds.StallAfter, 15*time.Minute)
	setDur(&c.Thresholds.NeverStartedAfter, 10*time.Minute)
	setDur(&c.Thresholds.ClarificationAfter, 15*time.Minute)
	setDur(&c.Thresholds.PermissionAfter, 15*time.Minute)
	setDur(&c.Thresholds.InterruptedAfter, 10*time.Minute)
	setDur(&c.Thresholds.FutureTolerance, 2*time.Minute)
	if c.Policy == nil {
		c.Policy = map[model.Kind]*model.Policy{}
	}
	for _, k := range model.Kinds {
		def := model.DefaultPolicy(k)
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
		if i := c.Slack.Interactivity; i != nil {
			setStr(&i.Mode, ModeSocket)
			setStr(&i.Listen, "127.0.0.1:9465")
		}
	}
	setDur(&c.HA.LeaseTTL, 30*time.Second)
	setStr(&c.HTTP.Listen, "127.0.0.1:9464")
	if c.HTTP.UI == nil {
		yes := true
		c.HTTP.UI = &yes
	}
	setStr(&c.Log.Level, "info")
	defaultMetrics(c)
	defaultOutlets(c)
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

// Routing is where Slack steps go, as policy reads it; nil without a
// slack: block.
func (c *Config) Routing() *model.Routing {
	if c.Slack == nil {
		return nil
	}
	r := &model.Routing{DefaultChannel: c.Slack.DefaultChannel, DefaultMention: c.Slack.DefaultMention, Routes: c.Slack.Routes}
	if i := c.Slack.Interactivity; i != nil {
		r.Allowed = model.Actors{Users: i.AllowedUsers, Usergroups: i.AllowedUsergroups}
	}
	return r
}

// Where says where the config file sets the field at path ("state.url"):
// "file:line", or "" where the file leaves it at its default (and for
// the built-in defaults). Errors about a value name it, so that whoever
// reads one knows which line to change.
func (c *Config) Where(path string) string {
	if l, ok := c.lines[path]; ok && c.File != "" {
		return fmt.Sprintf("%s:%d", c.File, l)
	}
	return ""
}
