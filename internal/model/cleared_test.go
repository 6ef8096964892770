package model

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

// TestEveryReasonHasACode ties every reason an episode clears with to its
// code and its words, in one table: a reason added to scan or policy is a
// Cleared constant, and it fails here until it is in ClearedCodes, has
// words of its own (distinct from every other's: the ledger's older rows
// are mapped back to codes from them) and a kind that can clear with it.
func TestEveryReasonHasACode(t *testing.T) {
	table := []struct {
		code  Cleared
		words string
	}{
		// The session left the snapshot.
		{ClearedSessionEnded, "the session ended"},
		{ClearedTaskArchived, "the task was archived"},
		{ClearedSessionGone, "the session is gone from kandev"},
		// A turn's progress.
		{ClearedTurnCompleted, "the turn completed"},
		{ClearedTurnAbandoned, "the turn was abandoned — a kandev restart?"},
		{ClearedAgentOutput, "the agent produced output"},
		{ClearedTurnStarted, "a turn started"},
		{ClearedTurnMovedOn, "the turn moved on"},
		{ClearedOneOpenTurn, "one turn is open again"},
		// A parked session came back.
		{ClearedNewTurn, "a new turn started"},
		{ClearedAgentReplied, "the agent replied"},
		{ClearedQueued, "a message was queued for it"},
		{ClearedUnparked, "kandev no longer marks it interrupted"},
		{ClearedResumed, "the session resumed"},
		// kandev's rows of a question or a permission.
		{ClearedAnswered, "answered"},
		{ClearedApproved, "approved"},
		{ClearedRejected, "rejected in kandev"},
		{ClearedCancelled, "cancelled in kandev"},
		{ClearedExpired, "expired in kandev (the agent stopped waiting)"},
		{ClearedQuestionGone, "the question is gone from kandev"},
		{ClearedPermissionGone, "the permission request is gone from kandev"},
		{ClearedNoLongerWaiting, "no longer waiting for a person"},
		{ClearedPermissionOrphaned, "the turn closed (a kandev restart?): the permission can no longer be granted"},
		// A person.
		{ClearedFromSlack, "resolved from Slack"},
		{ClearedByHand, "resolved by hand"},
		// Anything else.
		{ClearedOther, "the condition cleared"},
	}
	inTable, words := map[Cleared]bool{}, map[string]Cleared{}
	for _, row := range table {
		inTable[row.code] = true
		if got := row.code.Words(); got != row.words {
			t.Errorf("%s says %q, want %q", row.code, got, row.words)
		}
		if other, dup := words[row.words]; dup {
			t.Errorf("%s and %s share the words %q", other, row.code, row.words)
		}
		words[row.words] = row.code
		if !slices.Contains(ClearedCodes, row.code) {
			t.Errorf("%s is not in ClearedCodes", row.code)
		}
		if !row.code.Known() {
			t.Errorf("%s is not Known", row.code)
		}
		cleared := false
		for _, k := range Kinds {
			cleared = cleared || slices.Contains(ClearedBy(k), row.code)
		}
		if !cleared {
			t.Errorf("no kind clears with %s (ClearedBy)", row.code)
		}
	}
	for _, c := range ClearedCodes {
		if !inTable[c] {
			t.Errorf("ClearedCodes lists %s, which this table does not tie to words", c)
		}
	}
	if len(ClearedCodes) != len(table) {
		t.Errorf("ClearedCodes lists %d codes, the table %d", len(ClearedCodes), len(table))
	}
	for _, c := range declaredCodes(t) {
		if !inTable[c] {
			t.Errorf("cleared.go declares %s, which this table does not tie to words", c)
		}
	}
	if Cleared("no such code").Words() != "the condition cleared" {
		t.Error("an unknown code does not read as other's words")
	}
	if got := (Reason{Code: ClearedFromSlack, Who: "U123"}).Words(); got != "resolved from Slack by U123" {
		t.Errorf("a click's reason says %q", got)
	}
	for _, k := range Kinds {
		seen := map[Cleared]bool{}
		for _, c := range ClearedBy(k) {
			if seen[c] || !c.Known() {
				t.Errorf("ClearedBy(%s) lists %s twice, or a code unknown", k, c)
			}
			seen[c] = true
		}
	}
}

// declaredCodes are the constants of type Cleared that cleared.go
// declares, read from its source: a constant added there but left out of
// ClearedCodes is a reason with no code anyone counts.
func declaredCodes(t *testing.T) []Cleared {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "cleared.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []Cleared
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Cleared" {
				continue
			}
			for _, val := range v.Values {
				if lit, ok := val.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					out = append(out, Cleared(lit.Value[1:len(lit.Value)-1]))
				}
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("found only %d Cleared constants in cleared.go: the parse is broken", len(out))
	}
	return out
}
