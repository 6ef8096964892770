package config

// Metrics are the opt-in series: per-workspace findings and ages, under
// names of their own (watchdogd_findings_by_workspace,
// watchdogd_oldest_finding_age_by_workspace_seconds), so that turning them
// on changes no other series' labels.
type Metrics struct {
	ByWorkspace bool `yaml:"by_workspace"`
	// MaxWorkspaces bounds the workspaces labelled, first seen first; the
	// rest count as workspace_id="other".
	MaxWorkspaces int `yaml:"max_workspaces"`
}

// maxWorkspacesLimit bounds metrics.max_workspaces: each workspace is 14
// series on every scrape.
const maxWorkspacesLimit = 1000

func defaultMetrics(c *Config) {
	if c.Metrics.MaxWorkspaces == 0 {
		c.Metrics.MaxWorkspaces = 50
	}
}

// metricsWritten catches a max_workspaces written as 0, before the
// default would silently replace it.
func (v validator) metricsWritten(c *Config) {
	if v.set("metrics.max_workspaces") && c.Metrics.MaxWorkspaces == 0 {
		v.add("metrics.max_workspaces", "must be at least 1 (leave it out for the default, 50)")
	}
}

func (v validator) metrics(c *Config) {
	if n := c.Metrics.MaxWorkspaces; n < 1 || n > maxWorkspacesLimit {
		v.add("metrics.max_workspaces", "%d is not between 1 and %d (each workspace is 14 series)", n, maxWorkspacesLimit)
	}
}
