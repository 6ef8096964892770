// Command promcheck keeps the chart's dashboard and PromQL honest: the
// dashboard decodes strictly against Grafana's schema, and every
// watchdogd_* series that the Grafana dashboard and the rendered alert rules
// read, and every label value they match on it, must be one the daemon
// registers (so a renamed metric or label value cannot leave a panel blank
// or an alert silently never firing), and the dashboard's
// queries are written out as recording rules so that `promtool check rules`
// parses them like the alerts.
//
//	go run ./hack/promcheck -dashboard deploy/helm/watchdogd/dashboards/watchdogd.json \
//	    -rules rendered-rules.yaml -out dashboard-rules.yaml
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/watchdogd/watchdogd/internal/metrics"
	"go.yaml.in/yaml/v3"
)

func main() { os.Exit(run()) }

func run() int {
	dashboard := flag.String("dashboard", "", "Grafana dashboard JSON")
	rules := flag.String("rules", "", "rendered Prometheus rule file (groups:)")
	out := flag.String("out", "", "where to write the dashboard's queries as recording rules")
	flag.Parse()
	if err := check(*dashboard, *rules, *out); err != nil {
		fmt.Fprintln(os.Stderr, "promcheck:", err)
		return 1
	}
	return 0
}

func check(dashboardFile, rulesFile, out string) error {
	if err := grafanaSchema(dashboardFile); err != nil {
		return err
	}
	known, err := registered()
	if err != nil {
		return err
	}
	panels, err := dashboardExprs(dashboardFile)
	if err != nil {
		return err
	}
	alerts, err := ruleExprs(rulesFile)
	if err != nil {
		return err
	}
	var problems []string
	for _, set := range []map[string]string{panels, alerts} {
		for _, name := range sortedKeys(set) {
			for _, m := range unknownSeries(set[name], known) {
				problems = append(problems, fmt.Sprintf("%s reads %s, which watchdogd does not export", name, m))
			}
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return writeRecordingRules(out, panels)
}

// series maps each series name the daemon exposes (histogram suffixes
// included) to the label sets it is exported with. Every label combination
// is created at zero, so these are all the values a query can match.
type series map[string][]map[string]string

func registered() (series, error) {
	reg := prometheus.NewRegistry()
	// The per-workspace series exist only with metrics.by_workspace on:
	// on, as a dashboard reading them expects.
	metrics.New(reg, "check").Workspaces.Observe(nil, metrics.PerWorkspace{On: true, Max: 1}, time.Now())
	families, err := reg.Gather()
	if err != nil {
		return nil, fmt.Errorf("gather watchdogd's metrics: %w", err)
	}
	known := series{}
	for _, f := range families {
		var sets []map[string]string
		for _, m := range f.GetMetric() {
			set := map[string]string{}
			for _, l := range m.GetLabel() {
				set[l.GetName()] = l.GetValue()
			}
			sets = append(sets, set)
		}
		for _, suffix := range []string{"", "_bucket", "_sum", "_count"} {
			known[f.GetName()+suffix] = sets
		}
	}
	return known, nil
}

var (
	selector = regexp.MustCompile(`\b(watchdogd_[a-z0-9_]+)(\{[^}]*\})?`)
	matcher  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"`)
)

// unknownSeries names what a query reads that the daemon never exports: a
// series name, or an equality or regex matcher on one of the series' own
// labels that no exported value satisfies (a result="failure" where the
// daemon says "failed" would leave an alert that can never fire). Matchers
// on labels the series lacks are the scrape's (namespace, job, instance).
func unknownSeries(expr string, known series) []string {
	var out []string
	for _, m := range selector.FindAllStringSubmatch(expr, -1) {
		sets, ok := known[m[1]]
		if !ok {
			out = append(out, m[1])
			continue
		}
		for _, mm := range matcher.FindAllStringSubmatch(m[2], -1) {
			if (mm[2] == "=" || mm[2] == "=~") && !anyMatches(sets, mm[1], mm[2], mm[3]) {
				out = append(out, fmt.Sprintf("%s{%s%s%q}", m[1], mm[1], mm[2], mm[3]))
			}
		}
	}
	return out
}

func anyMatches(sets []map[string]string, label, op, value string) bool {
	re, err := regexp.Compile("^(?:" + value + ")$")
	for _, set := range sets {
		v, has := set[label]
		if !has {
			return true // not the series' label: the scrape's
		}
		if v == value || (op == "=~" && err == nil && re.MatchString(v)) {
			return true
		}
	}
	return len(sets) == 0
}

// dashboardExprs returns each panel target's query, keyed "panel <title>
// <refId>", with Grafana's $namespace variable given a value so that the
// query is plain PromQL.
func dashboardExprs(file string) (map[string]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				RefID string `json:"refId"`
				Expr  string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	exprs := map[string]string{}
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			exprs[fmt.Sprintf("panel %q %s", p.Title, t.RefID)] = strings.ReplaceAll(t.Expr, "$namespace", "kandev")
		}
	}
	if len(exprs) == 0 {
		return nil, fmt.Errorf("%s: no panel queries", file)
	}
	return exprs, nil
}

// ruleExprs returns each rule's expression from a Prometheus rule file.
func ruleExprs(file string) (map[string]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert  string `yaml:"alert"`
				Record string `yaml:"record"`
				Expr   string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	exprs := map[string]string{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			exprs["alert "+r.Alert+r.Record] = r.Expr
		}
	}
	if len(exprs) == 0 {
		return nil, fmt.Errorf("%s: no rules", file)
	}
	return exprs, nil
}

func writeRecordingRules(out string, exprs map[string]string) error {
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	for i, name := range sortedKeys(exprs) {
		rules = append(rules, rule{Record: fmt.Sprintf("dashboard:query_%d", i+1), Expr: exprs[name]})
	}
	doc := map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
