package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// slackScopes are the bot scopes watchdogd uses: chat:write (post, edit,
// reply to one person), channels:history and groups:history (look for an
// interrupted delivery before a re-post), usergroups:read (the members of
// allowed_usergroups).
var slackScopes = []string{"chat:write", "channels:history", "groups:history", "usergroups:read"}

// TestSlackScopesAgree: the Slack app manifest asks for exactly the scopes
// watchdogd uses, and every place that tells a user which scopes to give
// the bot names all of them: wherever chat:write is named, so are the
// other three, and a config using allowed_usergroups names
// usergroups:read.
func TestSlackScopesAgree(t *testing.T) {
	b, err := os.ReadFile("../../deploy/slack/manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		OAuth struct {
			Scopes struct{ Bot []string } `yaml:"scopes"`
		} `yaml:"oauth_config"`
	}
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(slices.Values(m.OAuth.Scopes.Bot)); !slices.Equal(got, slices.Sorted(slices.Values(slackScopes))) {
		t.Errorf("the manifest's bot scopes are %v, want %v", m.OAuth.Scopes.Bot, slackScopes)
	}

	examples, _ := filepath.Glob("../../config/examples/*.yaml")
	// Each of these tells a user which scopes to give the bot.
	telling := []string{"../../README.md", "../../deploy/helm/watchdogd/README.md", "../../config/watchdogd.yaml",
		"../../deploy/slack/manifest.yaml", "../../config/examples/routes.yaml", "../../config/examples/interactivity.yaml"}
	for _, f := range append(slices.Clone(telling), examples...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		named := 0
		for _, p := range paragraphs(text) {
			if !strings.Contains(p, "chat:write") {
				continue
			}
			named++
			for _, s := range slackScopes {
				if !strings.Contains(p, s) {
					t.Errorf("%s names chat:write without %s in:\n%s", f, s, p)
				}
			}
		}
		if named == 0 && slices.Contains(telling, f) {
			t.Errorf("%s does not name the bot's scopes", f)
		}
		if strings.Contains(text, "allowed_usergroups:") && !strings.Contains(text, "usergroups:read") {
			t.Errorf("%s uses allowed_usergroups without naming the scope usergroups:read", f)
		}
	}
}

// paragraphs splits text at blank lines, and at lines that are only a
// comment marker: a YAML comment block is a paragraph.
func paragraphs(text string) []string {
	var out []string
	var cur []string
	for _, line := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(line); t == "" || t == "#" {
			if len(cur) > 0 {
				out = append(out, strings.Join(cur, "\n"))
			}
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, "\n"))
	}
	return out
}
