package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// grafanaSchema decodes the dashboard strictly with the types Grafana's
// Foundation SDK generates from Grafana's own dashboard and panel schemas:
// a field Grafana does not know on the dashboard or a panel, a value of the
// wrong type, or a missing required field fails the check. No Grafana runs
// here (none is reachable offline); this is the next best thing to loading
// the dashboard in one.
func grafanaSchema(file string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	plugins.RegisterDefaultPlugins() // panel and query types: timeseries, stat, prometheus…
	// The classic dashboard JSON is what Grafana's sidecar and file
	// provisioning load; the SDK's preferred dashboardv2 is the newer
	// layout-based format.
	var d dashboard.Dashboard //nolint:staticcheck // classic JSON is the format the chart ships
	err = d.UnmarshalJSONStrict(raw)
	// The SDK returns its error list typed even when it is empty.
	if be := (cog.BuildErrors)(nil); errors.As(err, &be) && len(be) == 0 {
		err = nil
	}
	if err == nil {
		err = d.Validate()
	}
	if err != nil {
		return fmt.Errorf("%s against Grafana's dashboard schema: %w", file, err)
	}
	return nil
}
