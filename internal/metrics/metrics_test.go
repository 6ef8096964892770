package metrics

import (
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/watchdogd/watchdogd/internal/model"
)

// TestLabelsFollowTheVocabulary: every series an alert may read exists at
// zero from the start, for exactly the finding kinds, action kinds and
// results the vocabulary lists; and the help text names every result.
func TestLabelsFollowTheVocabulary(t *testing.T) {
	reg := prometheus.NewRegistry()
	New(reg, "test")
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string][]string{} // "family/label" → values, in order seen
	help := map[string]string{}
	for _, f := range families {
		help[f.GetName()] = f.GetHelp()
		for _, m := range f.GetMetric() {
			var pair []string
			for _, l := range m.GetLabel() {
				labels[f.GetName()+"/"+l.GetName()] = appendNew(labels[f.GetName()+"/"+l.GetName()], l.GetValue())
				pair = append(pair, l.GetValue())
			}
			if f.GetName() == "watchdogd_actions_total" {
				labels["watchdogd_actions_total/action,result"] = append(labels["watchdogd_actions_total/action,result"], strings.Join(pair, ","))
			}
		}
	}
	var kinds, actions, results, pairs []string
	for _, k := range model.Kinds {
		kinds = append(kinds, string(k))
	}
	for _, a := range model.ActionKinds {
		actions = append(actions, string(a))
		for _, r := range model.Results {
			pairs = append(pairs, string(a)+","+string(r))
		}
	}
	for _, r := range model.Results {
		results = append(results, string(r))
	}
	want := map[string][]string{
		"watchdogd_findings/kind":                   kinds,
		"watchdogd_oldest_finding_age_seconds/kind": kinds,
		"watchdogd_episodes_open/kind":              kinds,
		"watchdogd_episodes_untold/kind":            kinds,
		"watchdogd_actions_total/action":            actions,
		"watchdogd_actions_total/result":            results,
		"watchdogd_actions_total/action,result":     pairs,
		"watchdogd_action_delivery_seconds/action":  actions,
	}
	for name, w := range want {
		got := slices.Clone(labels[name])
		slices.Sort(got)
		w = slices.Clone(w)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Errorf("%s pre-created %v, want %v", name, got, w)
		}
	}
	for _, r := range model.Results {
		if !strings.Contains(help["watchdogd_actions_total"], string(r)) {
			t.Errorf("watchdogd_actions_total's help does not name result %s: %q", r, help["watchdogd_actions_total"])
		}
	}
}

func appendNew(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// TestRevision: build_info's revision label names the commit the toolchain
// recorded, and says "unknown" rather than an empty value (which PromQL
// reads as no label) when it recorded none.
func TestRevision(t *testing.T) {
	info := func(settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) { return &debug.BuildInfo{Settings: settings}, true }
	}
	cases := []struct {
		name string
		read func() (*debug.BuildInfo, bool)
		want string
	}{
		{"go build in a checkout", info(debug.BuildSetting{Key: "vcs", Value: "git"},
			debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			debug.BuildSetting{Key: "vcs.modified", Value: "true"}), "0123456789abcdef0123456789abcdef01234567"},
		{"-buildvcs=false", info(debug.BuildSetting{Key: "-trimpath", Value: "true"}), "unknown"},
		{"no build info", func() (*debug.BuildInfo, bool) { return nil, false }, "unknown"},
	}
	for _, c := range cases {
		if got := Revision(c.read); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
