package main

import (
	"debug/buildinfo"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

// TestBuildVersion: what "watchdogd version" names for each way the binary
// was built.
func TestBuildVersion(t *testing.T) {
	info := func(main string, settings ...string) func() (*debug.BuildInfo, bool) {
		bi := &debug.BuildInfo{Main: debug.Module{Version: main}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return func() (*debug.BuildInfo, bool) { return bi, true }
	}
	cases := []struct {
		name string
		v    string
		read func() (*debug.BuildInfo, bool)
		want string
	}{
		// make build stamps the version; nothing overrides it.
		{"stamped", "v1.4.0", info("v9.9.9", "vcs.revision", "0123456789"), "v1.4.0"},
		// go install github.com/watchdogd/watchdogd/cmd/watchdogd@v1.4.0
		{"go install of a release", "dev", info("v1.4.0"), "v1.4.0"},
		// go build in a checkout: the commit, and whether it had changes.
		{"go build in a clean checkout", "dev", info("(devel)", "vcs.revision", "7ccd701abcdef", "vcs.modified", "false"), "dev-7ccd701"},
		{"go build with local changes", "dev", info("(devel)", "vcs.revision", "7ccd701abcdef", "vcs.modified", "true"), "dev-7ccd701-dirty"},
		// go build -buildvcs=false, or outside a checkout: nothing to add.
		{"no VCS stamp", "dev", info("(devel)"), "dev"},
		{"no build info", "dev", func() (*debug.BuildInfo, bool) { return nil, false }, "dev"},
	}
	for _, c := range cases {
		if got := buildVersion(c.v, c.read); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// checkBuildInfo: a running daemon's /metrics names the commit the binary
// was built from in build_info: the test builds it in this checkout, as
// make build does, and the toolchain stamps the commit (in a clone; a git
// worktree gets no stamp, and the label says unknown).
func checkBuildInfo(t *testing.T, metrics string) {
	t.Helper()
	if want := `revision="` + stampedRevision(t) + `"`; !regexp.MustCompile(`(?m)^watchdogd_build_info\{.*` + want + `.*\} 1$`).MatchString(metrics) {
		t.Errorf("/metrics: watchdogd_build_info lacks %s", want)
	}
}

// stampedRevision is the commit the toolchain stamped into the binary
// under test, which must be this checkout's HEAD; "unknown" when it stamped
// none.
func stampedRevision(t *testing.T) string {
	t.Helper()
	bi, err := buildinfo.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range bi.Settings {
		if s.Key != "vcs.revision" {
			continue
		}
		head, err := exec.Command("git", "rev-parse", "HEAD").Output()
		if err != nil || strings.TrimSpace(string(head)) != s.Value {
			t.Fatalf("the binary names commit %s, the checkout is at %s (%v)", s.Value, head, err)
		}
		return s.Value
	}
	return "unknown"
}
