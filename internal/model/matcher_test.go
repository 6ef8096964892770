package model

import (
	"strings"
	"testing"
)

// TestParseMatcher: amtool's spellings read, each mistake refused with
// what is wrong.
func TestParseMatcher(t *testing.T) {
	cases := []struct {
		in   string
		want string // String() of the matcher, or the error's text
		err  bool
	}{
		{in: "kind=stalled_turn", want: `kind="stalled_turn"`},
		{in: `kind="stalled_turn"`, want: `kind="stalled_turn"`},
		{in: `workspace_id=~"ws-pay.*"`, want: `workspace_id=~"ws-pay.*"`},
		{in: "workspace_id=~ws-pay.*", want: `workspace_id=~"ws-pay.*"`}, // as the shell leaves it
		{in: "task_id!=t1", want: `task_id!="t1"`},
		{in: `session_id!~"s-(a|b)"`, want: `session_id!~"s-(a|b)"`},
		{in: " task_id = t1 ", want: `task_id="t1"`},
		{in: `task_id="a\"b"`, want: `task_id="a\"b"`},
		{in: "task_id=a=b!c", want: `task_id="a=b!c"`}, // the first operator splits
		{in: "kind=~.*question.*|stalled_turn", want: `kind=~".*question.*|stalled_turn"`},
		{in: "kind=bogus", err: true, want: `kind "bogus": unknown kind (known: `},
		{in: "kind!=bogus", err: true, want: `kind "bogus": unknown kind`},
		{in: "kind=~stale.*", err: true, want: `kind=~"stale.*" matches no kind`},
		{in: "title=x", err: true, want: `unknown key "title" (known: workspace_id, task_id, session_id, kind)`},
		{in: "session_id", err: true, want: `"session_id": want key=value, key!=value, key=~regex or key!~regex`},
		{in: "=x", err: true, want: `want key=value`},
		{in: "task_id!x", err: true, want: `want key=value`},
		{in: "task_id=~(", err: true, want: `task_id=~"(": not a regular expression (RE2)`},
		{in: `task_id="open`, err: true, want: `the quoted value is not closed`},
		{in: "task_id=" + strings.Repeat("x", 1100), err: true, want: "matcher of 1108 bytes: at most 1024"},
	}
	for _, c := range cases {
		m, err := ParseMatcher(c.in)
		switch {
		case c.err && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: error %v, want one containing %q", c.in, err, c.want)
		case !c.err && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case !c.err && m.String() != c.want:
			t.Errorf("%q: %s, want %s", c.in, m, c.want)
		}
	}
}

// TestMatchersMatch: each operator on an episode, a regex anchored at both
// ends as Alertmanager anchors it, and every matcher required.
func TestMatchersMatch(t *testing.T) {
	e := Episode{WorkspaceID: "ws-payments", TaskID: "t1", SessionID: "s-a", Kind: KindStalledTurn}
	parse := func(s ...string) Matchers {
		var out Matchers
		for _, x := range s {
			m, err := ParseMatcher(x)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
		return out
	}
	cases := []struct {
		name string
		ms   Matchers
		want bool
	}{
		{"equal", parse("kind=stalled_turn"), true},
		{"equal, another value", parse("kind=never_started"), false},
		{"not equal", parse("task_id!=t2"), true},
		{"not equal, the value", parse("task_id!=t1"), false},
		{"regex over the whole value", parse("workspace_id=~ws-pay.*"), true},
		// Anchored: "pay" alone is not the whole of "ws-payments".
		{"regex anchored at the start", parse("workspace_id=~pay.*"), false},
		{"regex anchored at the end", parse("workspace_id=~ws-pay"), false},
		// ^(?:a|b)$, not ^a|b$: an alternation is anchored whole.
		{"alternation anchored whole", parse("session_id=~x|s-"), false},
		{"not regex", parse("session_id!~s-b|s-c"), true},
		{"not regex, matching", parse("session_id!~s-.*"), false},
		{"every matcher must hold", parse("kind=stalled_turn", "task_id=t2"), false},
		{"all hold", parse("kind=stalled_turn", "workspace_id=~ws-.*", "task_id!=t2"), true},
		{"none match nothing", nil, false},
		// Built by hand (a test, a caller without NewMatcher): compiled
		// when used.
		{"regex built by hand", Matchers{{Name: "task_id", Op: MatchRegexp, Value: "t."}}, true},
		{"a bad regex built by hand mutes nothing", Matchers{{Name: "task_id", Op: MatchNotRegexp, Value: "("}}, false},
		{"an unknown key mutes nothing, even !=", Matchers{{Name: "title", Op: MatchNotEqual, Value: "x"}}, false},
	}
	for _, c := range cases {
		if got := c.ms.Matches(e); got != c.want {
			t.Errorf("%s: %v matches %v, want %v", c.name, c.ms, got, c.want)
		}
	}
}

// TestSelective: a silence needs a matcher an empty value fails, as
// Alertmanager requires, or it mutes nearly everything.
func TestSelective(t *testing.T) {
	for in, want := range map[string]bool{
		"kind=stalled_turn": true, "task_id!=t1": false, "session_id=~.*": false, "session_id=~.+": true,
		"task_id=": false, "task_id!~": true,
	} {
		m, err := ParseMatcher(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := (Matchers{m}).Selective(); got != want {
			t.Errorf("%s: selective %v, want %v", in, got, want)
		}
	}
}

// TestFromMatch: the config's equality match: as matchers, in MatchKeys'
// order, the empty keys left out.
func TestFromMatch(t *testing.T) {
	got := FromMatch(Match{Kind: KindStalledTurn, WorkspaceID: "ws-1"}).String()
	if want := `workspace_id="ws-1" kind="stalled_turn"`; got != want {
		t.Fatalf("%s, want %s", got, want)
	}
	if v, ok := FromMatch(Match{SessionID: "s1"}).EqualValue("session_id"); !ok || v != "s1" {
		t.Fatalf("EqualValue: %q %v", v, ok)
	}
}
