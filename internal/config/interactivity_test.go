package config

import (
	"slices"
	"strings"
	"testing"
)

// TestNotesSayWhoMayNotAct: empty allowed lists mean nobody may act, and
// check-config says where; lists given, or no interactivity, say nothing.
func TestNotesSayWhoMayNotAct(t *testing.T) {
	const head = "slack:\n  token_file: /t\n  default_channel: C0DEFAULT\n"
	const inter = "  interactivity:\n    app_token_file: /a\n"
	for _, c := range []struct {
		name, yaml string
		want       []string // substrings, one per note
	}{
		{"no interactivity: no buttons, nothing to say", head, nil},
		{"default lists empty", head + inter, []string{"slack.interactivity: allowed_users and allowed_usergroups are empty"}},
		{"default users given", head + inter + "    allowed_users: [U0ALICE]\n", nil},
		{"default group given", head + inter + "    allowed_usergroups: [S0ONCALL]\n", nil},
		{"a route's own empty lists replace the defaults",
			head + inter + "    allowed_users: [U0ALICE]\n  routes:\n    - match: {workspace_id: w}\n      channel: C0OPS\n      allowed_users: []\n",
			[]string{"slack.routes[0]: allowed_users and allowed_usergroups are empty: nobody may act from Slack on its messages (in C0OPS)"}},
		{"routes with their own lists and no default channel: the empty defaults serve nobody",
			"slack:\n  token_file: /t\n" + inter + "  routes:\n    - match: {workspace_id: w}\n      channel: C0OPS\n      allowed_usergroups: [S0OPS]\n", nil},
		{"a route without lists uses the empty defaults",
			"slack:\n  token_file: /t\n" + inter + "  routes:\n    - match: {workspace_id: w}\n      channel: C0OPS\n", []string{"slack.interactivity: allowed_users"}},
	} {
		cfg, err := Parse("c.yaml", []byte(c.yaml), noEnv)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := cfg.Notes()
		if len(got) != len(c.want) || !slices.EqualFunc(got, c.want, strings.Contains) {
			t.Errorf("%s: notes %q, want %q", c.name, got, c.want)
		}
	}
}

// TestRoutingCarriesWhoMayAct: the default lists reach the routing policy
// reads; a route's own lists stay on the route.
func TestRoutingCarriesWhoMayAct(t *testing.T) {
	cfg, err := Parse("c.yaml", []byte("slack:\n  token_file: /t\n  default_channel: C0D\n  interactivity:\n    app_token_file: /a\n"+
		"    allowed_users: [U0ALICE]\n    allowed_usergroups: [S0ONCALL]\n  routes:\n    - match: {workspace_id: w}\n      channel: C0OPS\n      allowed_users: [U0BOB]\n"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Routing()
	if !slices.Equal(r.Allowed.Users, []string{"U0ALICE"}) || !slices.Equal(r.Allowed.Usergroups, []string{"S0ONCALL"}) ||
		!slices.Equal(r.Routes[0].AllowedUsers, []string{"U0BOB"}) || r.Routes[0].AllowedUsergroups != nil {
		t.Fatalf("routing %+v", r)
	}
	if cfg.Slack.Interactivity.Mode != ModeSocket || cfg.Slack.Interactivity.Listen != "127.0.0.1:9465" {
		t.Fatalf("defaults %+v", cfg.Slack.Interactivity)
	}
}
