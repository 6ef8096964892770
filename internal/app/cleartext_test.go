package app

import (
	"strings"
	"testing"

	"github.com/watchdogd/watchdogd/internal/config"
)

// TestCleartextKeys: a token configured for a URL without TLS to another
// host is named by its key; https, loopback, or no token is not.
func TestCleartextKeys(t *testing.T) {
	cases := []struct {
		name        string
		slackURL    string // "" for no slack: block
		slackToken  string
		kandevURL   string
		kandevToken string
		want        string
	}{
		{"shipped defaults", "https://slack.com/api/", "xoxb", "http://localhost:38429", "tok", ""},
		{"slack over http", "http://slack-proxy.internal/api/", "xoxb", "https://kandev.example.com", "tok", "slack.api_url"},
		{"kandev over http (ws://)", "https://slack.com/api/", "xoxb", "http://kandev.svc:38429", "tok", "kandev.base_url"},
		{"both, upper-case scheme", "HTTP://10.0.0.7/api/", "xoxb", "http://10.0.0.8", "tok", "slack.api_url,kandev.base_url"},
		// No token, nothing to leak: kandev's token is optional.
		{"kandev over http without a token", "", "", "http://kandev.svc:38429", "", ""},
		// Loopback never leaves the machine.
		{"loopback", "http://127.0.0.1:8080/api/", "xoxb", "http://[::1]:38429", "tok", ""},
		{"localhost subdomain", "http://slack.localhost/api/", "xoxb", "http://LOCALHOST:38429", "tok", ""},
		{"no slack block", "", "", "https://kandev.example.com", "tok", ""},
	}
	for _, c := range cases {
		cfg := &config.Config{Kandev: config.Kandev{BaseURL: c.kandevURL}}
		if c.slackURL != "" {
			cfg.Slack = &config.Slack{APIURL: c.slackURL}
		}
		src := Sources{Slack: config.Secret(c.slackToken), Kandev: config.Secret(c.kandevToken)}
		if got := strings.Join(cleartextKeys(cfg, src), ","); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
