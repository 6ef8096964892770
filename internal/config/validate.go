package config

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/watchdogd/watchdogd/internal/dburl"
	"github.com/watchdogd/watchdogd/internal/model"
)

// validate checks the defaulted config; d knows where each field was set.
func validate(c *Config, d *decoder) {
	v := validator{d: d}
	v.database(c)
	v.kandev(c)
	if _, err := ParseSchedule(c.Schedule); err != nil {
		v.add("schedule", "%q is not a cron schedule: %v", c.Schedule, err)
	}
	if c.Database.ScanTimeout > c.CycleTimeout {
		v.add("database.scan_timeout", "%s is longer than cycle_timeout (%s), which bounds the whole cycle", dur(c.Database.ScanTimeout), dur(c.CycleTimeout))
	}
	v.policies(c)
	v.state(c)
	v.slack(c)
	v.alertmanager(c)
	v.webhooks(c)
	v.silences(c)
	v.quietHours(c)
	v.http(c)
	v.metrics(c)
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		v.add("log.level", "%q is not one of debug, info, warn, error", c.Log.Level)
	}
	switch c.Log.Format {
	case "", "json", "console":
	default:
		v.add("log.format", "%q is not json or console", c.Log.Format)
	}
}

type validator struct{ d *decoder }

// add records a problem at the line where path (or its nearest set parent)
// was written.
func (v validator) add(path, format string, args ...any) {
	if v.d.failedAt(path) {
		return
	}
	line := 0
	for p := path; p != ""; p = parentPath(p) {
		if l, ok := v.d.lines[p]; ok {
			line = l
			break
		}
	}
	v.d.add(line, path, format, args...)
}

func (v validator) set(path string) bool { _, ok := v.d.lines[path]; return ok }

func (v validator) database(c *Config) {
	if c.Database.URL != "" && c.Database.URLFile != "" {
		v.add("database.url_file", "set both database.url and database.url_file; choose one")
	}
	if c.Database.URL != "" {
		v.url("database.url", c.Database.URL, true)
	}
}

// url checks a database URL's scheme and that no password is written in the
// YAML: passwords come from *_file or the environment. The URL is read as
// pgx reads it to connect, which ends a password where libpq does
// ("alice:#pw@db" holds one), and never quoted.
func (v validator) url(path, raw string, sqliteOK bool) {
	switch {
	case strings.HasPrefix(raw, "sqlite://"):
		if !sqliteOK {
			v.add(path, "must be a PostgreSQL URL")
		} else if raw == "sqlite://" {
			v.add(path, "names no file")
		}
		return
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
	default:
		v.add(path, "want sqlite://PATH, postgres:// or postgresql://")
		return
	}
	secrets, err := dburl.WrittenSecrets(raw)
	switch {
	case err != nil:
		v.add(path, "is not a valid PostgreSQL URL: %v", err)
	case slices.Contains(secrets, "password"):
		v.add(path, "contains a password; put the URL in %s_file or the environment instead", path)
	case len(secrets) > 0:
		v.add(path, "contains %s; put the URL in %s_file or the environment instead", strings.Join(secrets, ", "), path)
	}
}

func (v validator) kandev(c *Config) {
	if c.Kandev.CurrentTurnRule != "pre_spec" && c.Kandev.CurrentTurnRule != "spec" {
		v.add("kandev.current_turn_rule", "%q is not pre_spec or spec", c.Kandev.CurrentTurnRule)
	}
	v.httpURL("kandev.base_url", c.Kandev.BaseURL, "use kandev.token_file")
}

// httpURL checks an http(s) URL. One that carries credentials is refused
// without being quoted, even when it is otherwise malformed: quoting it
// would put a password into check-config's output and the daemon's log.
func (v validator) httpURL(path, raw, hint string) {
	u, err := url.Parse(raw)
	switch {
	case err == nil && u.User != nil, err != nil && strings.Contains(raw, "@"):
		v.add(path, "must not carry credentials; %s", hint)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		v.add(path, "%q is not an http(s) URL", raw)
	}
}

func (v validator) policies(c *Config) {
	for kind, p := range c.Policy {
		path := "policy." + string(kind)
		if !kind.Known() {
			v.add(path, "unknown finding kind (known: %s)", model.KindNames())
			continue
		}
		if len(p.Steps) == 0 {
			v.add(path+".steps", "needs at least one step")
		}
		for i, s := range p.Steps {
			sp := fmt.Sprintf("%s.steps[%d]", path, i)
			switch {
			case s.Action == "":
				v.add(sp+".action", "is required (%s)", model.StepActionNames())
			case !slices.Contains(model.StepActions, s.Action):
				v.add(sp+".action", "%q is not %s", s.Action, model.StepActionNames())
			case s.Action == model.ActionNudge, s.Action == model.ActionCancelAndNudge:
				if model.HumanOwesAnswer(kind) {
					v.add(sp+".action", "%s while a human owes an answer destroys the question: kandev stops the agent and resumes it with the nudge, "+
						"and the question leaves kandev's UI and API; use slack or log for %s", s.Action, kind)
				} else if s.Action == model.ActionNudge && (kind == model.KindStalledTurn || kind == model.KindNeverStarted) {
					v.add(sp+".action", "kandev refuses message.add while a session is RUNNING; use cancel_and_nudge for %s", kind)
				}
			}
			v.outletStep(c, sp, s)
			if s.After < 0 {
				v.add(sp+".after", "must not be negative")
			}
			if i > 0 && s.After < p.Steps[i-1].After {
				v.add(sp+".after", "%s comes before the previous step's %s; steps run in order", dur(s.After), dur(p.Steps[i-1].After))
			}
		}
		if p.RepeatEvery < 0 {
			v.add(path+".repeat_every", "must not be negative")
		}
		if p.ResolveHold < 0 {
			v.add(path+".resolve_hold", "must not be negative")
		}
	}
}

func (v validator) state(c *Config) {
	if c.State.URL != "" && c.State.URLFile != "" && v.set("state.url") {
		v.add("state.url_file", "set both state.url and state.url_file; choose one")
	}
	if v.set("state.url") {
		v.url("state.url", c.State.URL, true)
	}
	v.claimTTL(c)
	if c.HA.Enabled && !strings.HasPrefix(c.State.URL, "postgres") && c.State.URLFile == "" {
		v.add("ha.enabled", "replicas share their ledger: set state.url (or state.url_file) to PostgreSQL")
	}
}

var mentionRE = regexp.MustCompile(`^<(!subteam\^[A-Z0-9]+(\|[^>]*)?|@[UW][A-Z0-9]+|!here|!channel|!everyone)>$`)

func (v validator) slack(c *Config) {
	s := c.Slack
	if s == nil {
		return
	}
	if s.TokenFile == "" && !v.d.envSet("WATCHDOGD_SLACK_TOKEN") {
		v.add("slack.token_file", "no bot token source: set slack.token_file or WATCHDOGD_SLACK_TOKEN")
	}
	v.httpURL("slack.api_url", s.APIURL, "the bot token comes from slack.token_file")
	if s.MaxMessagesPerCycle < 1 {
		v.add("slack.max_messages_per_cycle", "must be at least 1")
	}
	if s.DefaultChannel == "" && len(s.Routes) == 0 {
		v.add("slack", "needs slack.default_channel or at least one route")
	}
	if s.DefaultChannel != "" {
		v.channelID("slack.default_channel", s.DefaultChannel)
	}
	if s.DefaultMention != "" && !mentionRE.MatchString(s.DefaultMention) {
		v.add("slack.default_mention", "%q is not a Slack mention like <!subteam^S123>, <@U123> or <!here>", s.DefaultMention)
	}
	for i, r := range s.Routes {
		p := fmt.Sprintf("slack.routes[%d]", i)
		if r.Channel == "" {
			v.add(p+".channel", "is required")
		} else {
			v.channelID(p+".channel", r.Channel)
		}
		if r.Mention != "" && !mentionRE.MatchString(r.Mention) {
			v.add(p+".mention", "%q is not a Slack mention like <!subteam^S123>, <@U123> or <!here>", r.Mention)
		}
		v.match(p+".match", r.Match)
	}
	v.interactivity(c)
}

// channelID refuses a channel name where an id belongs. chat.postMessage
// takes either, but chat.update (the resolve edit) and the history lookups
// that settle a crashed delivery from Slack's own record
// (conversations.history, .replies) take only the id: with a name, posts
// and thread replies would go out, but no message would ever be marked
// cleared, and a delivery interrupted by a crash could not be settled
// (channel_not_found). Slack's channel names are lowercase; ids start with
// C, G or D.
func (v validator) channelID(path, ch string) {
	switch ch[0] {
	case 'C', 'G', 'D':
	case 'U', 'W':
		v.add(path, "%q is a user id; use a channel id (C…, G…) or the id of the bot's direct message with that user (D…)", ch)
	default:
		v.add(path, "%q looks like a channel name; use the channel's id (like C0123456789, at the bottom of the channel's details in Slack)", ch)
	}
}

func (v validator) match(path string, m model.Match) {
	if m.Kind != "" && !m.Kind.Known() {
		v.add(path+".kind", "unknown finding kind %q", m.Kind)
	}
}

func (v validator) silences(c *Config) {
	for i, s := range c.Silences {
		p := fmt.Sprintf("silences[%d]", i)
		if s.Until.IsZero() {
			v.add(p+".until", "is required (an RFC 3339 time)")
		}
		v.match(p+".match", s.Match)
		switch all := s.All(); {
		case len(all) == 0:
			v.add(p+".match", "needs at least one of workspace_id, task_id, session_id, kind (or matchers:)")
		case !all.Selective():
			v.add(p+".matchers", "each matcher also matches an empty value (like task_id!=x or task_id=~\".*\"): add one that names what to silence, as Alertmanager requires")
		}
	}
}

func (v validator) quietHours(c *Config) {
	q := c.QuietHours
	if q == nil {
		return
	}
	if q.Timezone == "" {
		q.Timezone = "UTC"
	}
	loc, err := time.LoadLocation(q.Timezone)
	if err != nil {
		v.add("quiet_hours.timezone", "%q is not a time zone (like Europe/Berlin)", q.Timezone)
	}
	q.Location = loc
	if !q.Start.Set {
		v.add("quiet_hours.start", "is required (HH:MM)")
	}
	if !q.End.Set {
		v.add("quiet_hours.end", "is required (HH:MM)")
	}
	if q.Start.Set && q.End.Set && q.Start == q.End {
		v.add("quiet_hours.end", "equals start; the window would be empty")
	}
	for i, d := range q.Days {
		if _, ok := model.Weekday(d); !ok {
			v.add(fmt.Sprintf("quiet_hours.days[%d]", i), "%q is not one of mon, tue, wed, thu, fri, sat, sun", d)
		}
	}
}

func (v validator) http(c *Config) {
	if _, _, err := net.SplitHostPort(c.HTTP.Listen); err != nil {
		v.add("http.listen", "%q is not host:port", c.HTTP.Listen)
	}
	if c.HTTP.ExternalURL != "" {
		v.httpURL("http.external_url", c.HTTP.ExternalURL, "it is a link people follow")
	}
}

// explicitZeros catches durations written as 0 where 0 is meaningless,
// before defaults would silently replace them.
func explicitZeros(c *Config, d *decoder) {
	v := validator{d: d}
	for path, val := range map[string]time.Duration{
		"database.scan_timeout": c.Database.ScanTimeout, "database.busy_timeout": c.Database.BusyTimeout, "cycle_timeout": c.CycleTimeout,
		"thresholds.stall_after": c.Thresholds.StallAfter, "thresholds.never_started_after": c.Thresholds.NeverStartedAfter,
		"thresholds.clarification_after": c.Thresholds.ClarificationAfter, "thresholds.permission_after": c.Thresholds.PermissionAfter,
		"thresholds.interrupted_after": c.Thresholds.InterruptedAfter, "thresholds.future_tolerance": c.Thresholds.FutureTolerance,
		"state.claim_ttl": c.State.ClaimTTL,
		"state.retention": c.State.Retention, "ha.lease_ttl": c.HA.LeaseTTL,
	} {
		if v.set(path) && val <= 0 {
			v.add(path, "must be more than 0")
		}
	}
	if c.Slack != nil && v.set("slack.timeout") && c.Slack.Timeout <= 0 {
		v.add("slack.timeout", "must be more than 0")
	}
	if a := c.Alertmanager; a != nil {
		for path, val := range map[string]time.Duration{"alertmanager.timeout": a.Timeout, "alertmanager.resend_interval": a.ResendInterval} {
			if v.set(path) && val <= 0 {
				v.add(path, "must be more than 0")
			}
		}
	}
	for i, w := range c.Webhooks {
		if path := fmt.Sprintf("webhooks[%d].timeout", i); v.set(path) && w.Timeout <= 0 {
			v.add(path, "must be more than 0")
		}
	}
	// A written 0 would be read as unset and become 20.
	if c.Slack != nil && v.set("slack.max_messages_per_cycle") && c.Slack.MaxMessagesPerCycle == 0 {
		v.add("slack.max_messages_per_cycle", "must be at least 1 (leave it out for the default, 20)")
	}
	v.metricsWritten(c)
}

// dur prints a duration the way it is written in the file: 10m, 1h30m, 90s.
func dur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
