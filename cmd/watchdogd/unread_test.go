package main

import (
	"io/fs"
	"os"
	"slices"
	"testing"

	"github.com/watchdogd/watchdogd/internal/config"
)

// TestUnreadFiles: check-config names each file the daemon would read and
// cannot be read here, with its field and why; not one a flag or the
// environment overrides, as the daemon then reads none.
func TestUnreadFiles(t *testing.T) {
	full := func() *config.Config {
		c := config.Default()
		c.Database.URL, c.Database.URLFile, c.State.URLFile = "", "/s/database-url", "/s/state-url"
		c.Kandev.TokenFile, c.HTTP.WebConfigFile = "/s/kandev-token", "/s/web.yml"
		c.Slack = &config.Slack{TokenFile: "/s/slack-token"}
		return c
	}
	missing := func(string) ([]byte, error) { return nil, &fs.PathError{Op: "open", Path: "x", Err: fs.ErrNotExist} }
	all := []string{"/s/database-url (database.url_file: file does not exist)", "/s/state-url (state.url_file: file does not exist)",
		"/s/kandev-token (kandev.token_file: file does not exist)", "/s/slack-token (slack.token_file: file does not exist)",
		"/s/web.yml (http.web_config_file: file does not exist)"}
	cases := []struct {
		name        string
		cfg         func() *config.Config
		databaseURL string
		env         map[string]string
		read        func(string) ([]byte, error)
		want        []string
	}{
		{"every file missing", full, "", nil, missing, all},
		{"every file read", full, "", nil, func(string) ([]byte, error) { return []byte("x"), nil }, nil},
		{"the environment and --database-url win over the files", full, "sqlite:///k.db",
			map[string]string{"WATCHDOGD_KANDEV_TOKEN": "pat", "WATCHDOGD_SLACK_TOKEN": "xoxb"}, missing,
			[]string{all[1], all[4]}},
		{"WATCHDOGD_DATABASE_URL wins too", full, "", map[string]string{"WATCHDOGD_DATABASE_URL": "sqlite:///k.db"}, missing, all[1:]},
		{"no slack block: its token file is never read", func() *config.Config { c := full(); c.Slack = nil; return c }, "", nil, missing,
			[]string{all[0], all[1], all[2], all[4]}},
		{"no file configured", config.Default, "", nil, missing, nil},
		{"unreadable, not missing", full, "", nil, func(p string) ([]byte, error) {
			if p == "/s/state-url" {
				return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrPermission}
			}
			return []byte("x"), nil
		}, []string{"/s/state-url (state.url_file: permission denied)"}},
	}
	for _, c := range cases {
		getenv := func(k string) string { return c.env[k] }
		if got := unreadFiles(getenv, c.databaseURL, c.cfg(), c.read); !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	// The real file system: a missing file says so as the OS does.
	c := config.Default()
	c.Kandev.TokenFile = t.TempDir() + "/kandev-token"
	got := unreadFiles(func(string) string { return "" }, "", c, os.ReadFile)
	if want := []string{c.Kandev.TokenFile + " (kandev.token_file: no such file or directory)"}; !slices.Equal(got, want) {
		t.Errorf("real file system: %q, want %q", got, want)
	}
}
