package model

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// MatchOp is how a matcher compares: Alertmanager's four operators.
type MatchOp string

// The operators.
const (
	MatchEqual     MatchOp = "="
	MatchNotEqual  MatchOp = "!="
	MatchRegexp    MatchOp = "=~"
	MatchNotRegexp MatchOp = "!~"
)

// MatchKeys are the keys a matcher may name: what an episode is matched
// on, by silences (these four operators) and routes (equality only).
var MatchKeys = []string{"workspace_id", "task_id", "session_id", "kind"}

// maxMatcher bounds a matcher's text: a silence's matchers are typed by a
// person or written in a config, and a regex past this is a mistake.
const maxMatcher = 1024

// Matcher is one condition of a silence, as Alertmanager spells it:
// kind="stalled_turn", workspace_id=~"ws-pay.*", task_id!=t1. A regex is
// RE2 and anchored as Alertmanager anchors it: it must match the whole
// value (^(?:re)$).
type Matcher struct {
	Name  string
	Op    MatchOp
	Value string
	re    *regexp.Regexp
}

// Matchers are a silence's conditions: every one must match.
type Matchers []Matcher

// Equal is the matcher name="value".
func Equal(name, value string) Matcher { return Matcher{Name: name, Op: MatchEqual, Value: value} }

// NewMatcher checks and builds a matcher: a known key, one of the four
// operators, a regex that compiles and, on kind, a value naming a kind
// (for a regex: matching at least one), since a typo there would silence
// nothing and say nothing.
func NewMatcher(name string, op MatchOp, value string) (Matcher, error) {
	m := Matcher{Name: name, Op: op, Value: value}
	if !slices.Contains(MatchKeys, name) {
		return m, fmt.Errorf("unknown key %q (known: %s)", name, strings.Join(MatchKeys, ", "))
	}
	switch op {
	case MatchEqual, MatchNotEqual:
		if name == "kind" && !Kind(value).Known() {
			return m, fmt.Errorf("kind %q: unknown kind (known: %s)", value, KindNames())
		}
	case MatchRegexp, MatchNotRegexp:
		if _, err := regexp.Compile(value); err != nil { // its own error names the value, not the anchored one
			return m, fmt.Errorf("%s%s%q: not a regular expression (RE2): %w", name, op, value, err)
		}
		re := regexp.MustCompile("^(?:" + value + ")$")
		m.re = re
		if name == "kind" && !slices.ContainsFunc(Kinds, func(k Kind) bool { return re.MatchString(string(k)) }) {
			return m, fmt.Errorf("kind%s%q matches no kind (known: %s)", op, value, KindNames())
		}
	default:
		return m, fmt.Errorf("operator %q: want =, !=, =~ or !~", op)
	}
	return m, nil
}

// ParseMatcher reads one matcher as Alertmanager and amtool take it:
// key=value, key!=value, key=~regex or key!~regex, the value bare or
// double-quoted with Go's escapes (kind="stalled_turn").
func ParseMatcher(s string) (Matcher, error) {
	if len(s) > maxMatcher {
		return Matcher{}, fmt.Errorf("matcher of %d bytes: at most %d", len(s), maxMatcher)
	}
	i := strings.IndexAny(s, "=!")
	if i <= 0 {
		return Matcher{}, fmt.Errorf("%q: want key=value, key!=value, key=~regex or key!~regex", s)
	}
	name, rest := strings.TrimSpace(s[:i]), s[i:]
	var op MatchOp
	for _, o := range []MatchOp{MatchRegexp, MatchNotRegexp, MatchNotEqual, MatchEqual} {
		if strings.HasPrefix(rest, string(o)) {
			op = o
			break
		}
	}
	if op == "" {
		return Matcher{}, fmt.Errorf("%q: want key=value, key!=value, key=~regex or key!~regex", s)
	}
	value := strings.TrimSpace(rest[len(op):])
	if strings.HasPrefix(value, `"`) {
		v, err := strconv.Unquote(value)
		if err != nil {
			return Matcher{}, fmt.Errorf("%q: the quoted value is not closed or has a bad escape", s)
		}
		value = v
	}
	return NewMatcher(name, op, value)
}

// UnmarshalText reads a matcher from a config file's matchers: list.
func (m *Matcher) UnmarshalText(b []byte) error {
	v, err := ParseMatcher(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// String is the matcher as Alertmanager prints it, the value quoted:
// workspace_id=~"ws-.*".
func (m Matcher) String() string { return m.Name + string(m.Op) + strconv.Quote(m.Value) }

// Matches reports whether the matcher holds for value.
func (m Matcher) Matches(value string) bool {
	switch m.Op {
	case MatchEqual:
		return value == m.Value
	case MatchNotEqual:
		return value != m.Value
	case MatchRegexp, MatchNotRegexp:
		re := m.re
		if re == nil { // built by hand, not through NewMatcher
			var err error
			if re, err = regexp.Compile("^(?:" + m.Value + ")$"); err != nil {
				return false // never a mute on a regex that cannot be read
			}
		}
		return re.MatchString(value) == (m.Op == MatchRegexp)
	}
	return false
}

// Label is an episode's value for a matcher key; false for a key that is
// not one of MatchKeys.
func (e Episode) Label(name string) (string, bool) {
	switch name {
	case "workspace_id":
		return e.WorkspaceID, true
	case "task_id":
		return e.TaskID, true
	case "session_id":
		return e.SessionID, true
	case "kind":
		return string(e.Kind), true
	}
	return "", false
}

// Matches reports whether every matcher holds for episode e. No matchers
// match nothing (a silence with none would mute everything), and neither
// does a matcher on a key episodes do not have.
func (ms Matchers) Matches(e Episode) bool {
	if len(ms) == 0 {
		return false
	}
	for _, m := range ms {
		v, ok := e.Label(m.Name)
		if !ok || !m.Matches(v) {
			return false
		}
	}
	return true
}

// Selective reports whether at least one matcher cannot match an empty
// value, Alertmanager's rule for a silence: without one (only
// task_id!=x, or session_id=~".*") it would mute nearly everything.
func (ms Matchers) Selective() bool {
	return slices.ContainsFunc(ms, func(m Matcher) bool { return !m.Matches("") })
}

// EqualValue is the value of ms's equality matcher on name, if it has one.
func (ms Matchers) EqualValue(name string) (string, bool) {
	for _, m := range ms {
		if m.Name == name && m.Op == MatchEqual {
			return m.Value, true
		}
	}
	return "", false
}

// String is the matchers as amtool prints them, separated by spaces.
func (ms Matchers) String() string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.String()
	}
	return strings.Join(parts, " ")
}

// FromMatch turns a route-style equality match (config's match:) into
// matchers, in MatchKeys' order.
func FromMatch(m Match) Matchers {
	var out Matchers
	for _, kv := range [][2]string{{"workspace_id", m.WorkspaceID}, {"task_id", m.TaskID}, {"session_id", m.SessionID}, {"kind", string(m.Kind)}} {
		if kv[1] != "" {
			out = append(out, Equal(kv[0], kv[1]))
		}
	}
	return out
}
