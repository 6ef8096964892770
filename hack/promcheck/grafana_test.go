package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const chartDashboard = "../../deploy/helm/watchdogd/dashboards/watchdogd.json"

// TestGrafanaSchema: the chart's dashboard passes; each mistake Grafana's
// schema catches fails with the field it concerns.
func TestGrafanaSchema(t *testing.T) {
	if err := grafanaSchema(chartDashboard); err != nil {
		t.Fatalf("the chart's dashboard: %v", err)
	}
	raw, err := os.ReadFile(chartDashboard)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"a panel field Grafana does not know", `"title": "Findings by kind",`, `"title": "Findings by kind", "legend": true,`, "unexpected field 'legend'"},
		{"a value of the wrong type", `"w": 12, "h": 8}`, `"w": "12", "h": 8}`, "gridPos.w"},
		{"a dashboard field Grafana does not know", `"refresh": "1m",`, `"refresh": "1m", "refreshInterval": "1m",`, "unexpected field 'refreshInterval'"},
		{"no annotations", `"annotations": {`, `"annotationz": {`, "annotations: required field is missing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(string(raw), c.old) {
				t.Fatalf("the dashboard no longer contains %s", c.old)
			}
			file := filepath.Join(t.TempDir(), "dashboard.json")
			if err := os.WriteFile(file, []byte(strings.Replace(string(raw), c.old, c.new, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := grafanaSchema(file); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error naming %q", err, c.want)
			}
		})
	}
}
