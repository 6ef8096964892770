package daemon

import (
	"slices"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
)

// TestKeepRestartOnly: a reload applies everything but the keys bound at
// start, which keep their running values and are named for the warning.
func TestKeepRestartOnly(t *testing.T) {
	base := func() *config.Config {
		c := &config.Config{Schedule: "@every 1m"}
		c.HTTP.Listen, c.HA.Enabled, c.HA.LeaseTTL = ":9850", true, 15*time.Second
		return c
	}
	cases := []struct {
		name   string
		change func(*config.Config)
		want   []string
	}{
		{"nothing restart-only changed", func(c *config.Config) { c.Schedule = "@every 5m" }, nil},
		{"listener moved", func(c *config.Config) { c.HTTP.Listen = ":9999" }, []string{"http.listen"}},
		{"TLS added", func(c *config.Config) { c.HTTP.WebConfigFile = "/etc/web.yml" }, []string{"http.web_config_file"}},
		// Turning HA off or on needs the lease keeper started (or stopped)
		// with the process.
		{"HA turned off", func(c *config.Config) { c.HA.Enabled = false }, []string{"ha.enabled"}},
		{"lease TTL", func(c *config.Config) { c.HA.LeaseTTL = time.Minute }, []string{"ha.lease_ttl"}},
		{"all at once", func(c *config.Config) {
			c.HTTP.Listen, c.HA.Enabled, c.Schedule = ":1", false, "@hourly"
		}, []string{"http.listen", "ha.enabled"}},
	}
	for _, c := range cases {
		old, cfg := base(), base()
		c.change(cfg)
		schedule := cfg.Schedule
		got := keepRestartOnly(old, cfg)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: changed %v, want %v", c.name, got, c.want)
		}
		if cfg.HTTP != old.HTTP || cfg.HA != old.HA {
			t.Errorf("%s: restart-only keys not kept: %+v %+v", c.name, cfg.HTTP, cfg.HA)
		}
		if cfg.Schedule != schedule {
			t.Errorf("%s: the reload's other keys were touched", c.name)
		}
	}
}
