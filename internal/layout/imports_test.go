package layout

import (
	"errors"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const (
	module = "github.com/watchdogd/watchdogd/"
	notify = module + "internal/notify"
)

// What a package under internal/notify is. Each has a rule of what it may
// depend on; a new package fails TestImports until it is given a role in
// notifyRoles.
type role int

const (
	protocol role = iota // claim, fence, send, settle: knows no outlet
	registry             // wires every outlet to its action kinds
	outlet               // one way an action goes out
	shared               // what two outlets use, below them (never sideways)
	double               // a test double of what an outlet talks to
)

// notifyRoles is each package under internal/notify with its role.
func notifyRoles() map[string]role {
	return map[string]role{
		notify:                           protocol,
		notify + "/registry":             registry,
		notify + "/words":                shared,
		notify + "/kandevapi":            shared,
		notify + "/slack":                outlet,
		notify + "/alertmanager":         outlet,
		notify + "/webhook":              outlet,
		notify + "/nudge":                outlet,
		notify + "/answer":               outlet,
		notify + "/snooze":               outlet,
		notify + "/logline":              outlet,
		notify + "/console":              outlet,
		notify + "/slack/slacktest":      double,
		notify + "/webhook/webhooktest":  double,
		notify + "/kandevapi/kandevtest": double,
	}
}

// TestImports holds the boundaries of the package graph, as `go list`
// shows it (every package's dependencies, direct or not, tests aside): no
// outlet depends on another outlet (what two share moves down into a
// shared package), the protocol depends on no outlet, a shared package and
// a test double on none either, and the pure decisions (internal/scan,
// internal/policy, internal/report) on no driver.
func TestImports(t *testing.T) {
	deps, roles := goList(t), notifyRoles()
	for pkg := range roles {
		if _, ok := deps[pkg]; !ok {
			t.Errorf("%s is not in the tree: drop it from notifyRoles", pkg)
		}
	}
	for pkg, ds := range deps {
		if pkg != notify && !strings.HasPrefix(pkg, notify+"/") {
			continue
		}
		r, ok := roles[pkg]
		if !ok {
			t.Errorf("%s has no role (protocol, registry, outlet, shared or double): give it one in notifyRoles", pkg)
			continue
		}
		for _, d := range ds {
			if why := refused(roles, r, d); why != "" {
				t.Errorf("%s imports %s: %s", pkg, d, why)
			}
		}
	}
	for _, pkg := range []string{module + "internal/scan", module + "internal/policy", module + "internal/report"} {
		if _, ok := deps[pkg]; !ok {
			t.Errorf("%s is not in the tree", pkg)
		}
		for _, d := range deps[pkg] {
			if driver(d) {
				t.Errorf("%s imports %s: a decision imports no driver (databases, networks, outlets); it is a pure function of its inputs", pkg, d)
			}
		}
	}
}

// refused says why a package of role r may not depend on d ("" when it may).
func refused(roles map[string]role, r role, d string) string {
	dr, inNotify := roles[d]
	if !inNotify {
		return ""
	}
	switch r {
	case protocol:
		return "the protocol knows no outlet, nor anything built on it"
	case outlet:
		switch dr {
		case outlet:
			return "an outlet imports no other outlet: move what they share down into a shared package"
		case registry, double:
			return "an outlet imports neither the registry nor a test double"
		}
	case shared:
		if dr != protocol && dr != shared {
			return "what outlets share sits below them"
		}
	case double:
		return "a test double imitates the far side with its own code, none of the side it is tested against"
	}
	return ""
}

// driver reports whether a dependency reaches a database, a network or an
// outlet: any package outside the standard library and this module (the
// SQLite and PostgreSQL drivers, slack-go, the WebSocket client; the
// decisions need none), database/sql and net/http, and this module's
// packages that read or write kandev, the ledger or an outlet.
func driver(d string) bool {
	if strings.HasPrefix(d, module) {
		for _, io := range []string{"internal/kandev", "internal/kandevdb", "internal/kandevsql", "internal/ledger", "internal/notify", "internal/pgtest"} {
			if p := module + io; d == p || strings.HasPrefix(d, p+"/") {
				return true
			}
		}
		return false
	}
	first, _, _ := strings.Cut(d, "/")
	return strings.Contains(first, ".") || d == "database/sql" || strings.HasPrefix(d, "database/sql/") || d == "net/http" || strings.HasPrefix(d, "net/http/")
}

// goList is each of the module's packages with its dependencies, direct
// or not, without their tests'.
func goList(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", module+"...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		sort.Strings(f[1:])
		deps[f[0]] = f[1:]
	}
	return deps
}
