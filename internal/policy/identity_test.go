package policy

import (
	"strings"
	"testing"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// TestIdentity: what matches a finding to its episode across cycles.
func TestIdentity(t *testing.T) {
	long := func(c string) *string { return strp(strings.Repeat(c, 600)) }
	with := func(kind model.Kind, pending *string) scan.Finding {
		f := finding(kind, t0)
		f.PendingID = pending
		return f
	}
	ids := func(session, turn string) scan.Finding {
		f := finding(model.KindStalledTurn, t0)
		f.SessionID, f.TurnID, f.PendingID = session, strp(turn), nil
		return f
	}
	cases := []struct {
		name string
		a, b scan.Finding
		same bool
	}{
		// A question that turns from unanswered to shadowed stays one episode.
		{"both clarification kinds", with(model.KindUnansweredClarification, strp("p1")), with(model.KindShadowedClarification, strp("p1")), true},
		{"another pending id", with(model.KindUnansweredClarification, strp("p1")), with(model.KindUnansweredClarification, strp("p2")), false},
		{"another kind", with(model.KindPendingPermission, strp("p1")), with(model.KindUnansweredClarification, strp("p1")), false},
		// A "|" inside an id cannot make two findings one.
		{"ids that hold the separator", ids("a|b", "c"), ids("a", "b|c"), false},
		{"ids that hold the escape", ids(`a\`, "|c"), ids("a", `\|c`), false},
		// Ids too long to index are hashed, stably, and still told apart.
		{"a long id, seen again", with(model.KindUnansweredClarification, long("a")), with(model.KindShadowedClarification, long("a")), true},
		{"two long ids", with(model.KindUnansweredClarification, long("a")), with(model.KindUnansweredClarification, long("b")), false},
	}
	for _, c := range cases {
		a, b := Identity(c.a), Identity(c.b)
		if (a == b) != c.same {
			t.Errorf("%s: %q and %q, want same=%v", c.name, a, b, c.same)
		}
		for _, id := range []string{a, b} {
			if len(id) > maxIdentity {
				t.Errorf("%s: identity of %d bytes, over %d", c.name, len(id), maxIdentity)
			}
		}
	}
	if got := Identity(finding(model.KindStalledTurn, t0)); got != "stalled_turn|s1|turn-1|p1" {
		t.Errorf("a short identity is %q, want it readable as it is", got)
	}
}
