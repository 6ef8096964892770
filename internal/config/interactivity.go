package config

import (
	"fmt"
	"net"
	"regexp"
)

var (
	userIDRE      = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)
	usergroupIDRE = regexp.MustCompile(`^S[A-Z0-9]{2,}$`)
)

// interactivity checks slack.interactivity and the routes' allowed lists.
// Who may act is named by id: a display name can be taken by anyone.
func (v validator) interactivity(c *Config) {
	s := c.Slack
	for i, r := range s.Routes {
		p := fmt.Sprintf("slack.routes[%d]", i)
		v.actors(p, r.AllowedUsers, r.AllowedUsergroups)
		if s.Interactivity == nil && r.AllowedUsers != nil {
			v.add(p+".allowed_users", "has no effect without slack.interactivity (no buttons are sent)")
		}
		if s.Interactivity == nil && r.AllowedUsergroups != nil {
			v.add(p+".allowed_usergroups", "has no effect without slack.interactivity (no buttons are sent)")
		}
	}
	in := s.Interactivity
	if in == nil {
		return
	}
	const p = "slack.interactivity"
	v.actors(p, in.AllowedUsers, in.AllowedUsergroups)
	switch in.Mode {
	case ModeSocket:
		if in.AppTokenFile == "" && !v.d.envSet("WATCHDOGD_SLACK_APP_TOKEN") {
			v.add(p+".app_token_file", "no app-level token source for Socket Mode: set slack.interactivity.app_token_file or WATCHDOGD_SLACK_APP_TOKEN")
		}
	case ModeHTTP:
		if in.SigningSecretFile == "" && !v.d.envSet("WATCHDOGD_SLACK_SIGNING_SECRET") {
			v.add(p+".signing_secret_file", "no signing secret source for the HTTP mode: set slack.interactivity.signing_secret_file or WATCHDOGD_SLACK_SIGNING_SECRET")
		}
		if _, _, err := net.SplitHostPort(in.Listen); err != nil {
			v.add(p+".listen", "%q is not host:port", in.Listen)
		} else if in.Listen == c.HTTP.Listen {
			v.add(p+".listen", "%q is http.listen too; Slack's requests have a listener of their own", in.Listen)
		}
	default:
		v.add(p+".mode", "%q is not socket or http", in.Mode)
	}
}

// actors checks a list of users and one of user groups.
func (v validator) actors(path string, users, groups []string) {
	for i, u := range users {
		if !userIDRE.MatchString(u) {
			v.add(fmt.Sprintf("%s.allowed_users[%d]", path, i), "%q is not a Slack user id (like U0123ABCD: a person's profile, More, Copy member ID)", u)
		}
	}
	for i, g := range groups {
		if !usergroupIDRE.MatchString(g) {
			v.add(fmt.Sprintf("%s.allowed_usergroups[%d]", path, i), "%q is not a Slack user group id (like S0123ABCD)", g)
		}
	}
}

// Notes are what check-config says of a valid config besides SUCCESS:
// where nobody may act from Slack, since empty allowed lists mean nobody.
func (c *Config) Notes() []string {
	if c.Slack == nil || c.Slack.Interactivity == nil {
		return nil
	}
	in := c.Slack.Interactivity
	var out []string
	usesDefault := c.Slack.DefaultChannel != ""
	for i, r := range c.Slack.Routes {
		own := r.AllowedUsers != nil || r.AllowedUsergroups != nil
		switch {
		case !own:
			usesDefault = true
		case len(r.AllowedUsers)+len(r.AllowedUsergroups) == 0:
			out = append(out, fmt.Sprintf("slack.routes[%d]: allowed_users and allowed_usergroups are empty: nobody may act from Slack on its messages (in %s)", i, r.Channel))
		}
	}
	if usesDefault && len(in.AllowedUsers)+len(in.AllowedUsergroups) == 0 {
		out = append(out, "slack.interactivity: allowed_users and allowed_usergroups are empty: nobody may act from Slack on messages in the default channel or of a route without its own lists")
	}
	return out
}
