package ledger

import (
	"strings"
	"testing"
)

// TestDueLeavesTheTextsOut: the due list selects neither bodies nor
// findings (the claim reads the body); a renamed column would bring them
// back silently.
func TestDueLeavesTheTextsOut(t *testing.T) {
	a, e := blanked(prefixed("a.", actionCols), "a.body"), blanked(prefixed("e.", episodeCols), "e.finding")
	if strings.Contains(a, "a.body") || strings.Count(a, "''") != 1 || strings.Contains(e, "e.finding") || strings.Count(e, "''") != 1 {
		t.Fatalf("due columns:\n%s\n%s", a, e)
	}
}
