package model

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestEveryKindIsSpokenFor: a kind added to Kinds fails here until it has
// a default ladder and nudge text, words for people, and a row in the
// runbook and the README. (The metrics' labels and Slack's wording are
// held to the list in their own packages.)
func TestEveryKindIsSpokenFor(t *testing.T) {
	runbook, err := os.ReadFile("../../docs/runbook.md")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[Kind]bool{}
	for _, k := range Kinds {
		if seen[k] {
			t.Errorf("%s is listed twice", k)
		}
		seen[k] = true
		p := DefaultPolicy(k)
		if len(p.Steps) == 0 {
			t.Errorf("%s has no default ladder", k)
		}
		for _, s := range p.Steps {
			if !slices.Contains(StepActions, s.Action) {
				t.Errorf("%s's default ladder takes %q, which no step may", k, s.Action)
			}
			if s.Action == ActionNudge || s.Action == ActionCancelAndNudge {
				t.Errorf("%s's default ladder nudges: nudges are opt-in", k)
			}
		}
		if p.Text == "" {
			t.Errorf("%s has no default nudge text", k)
		}
		if KindWords(k) == string(k) {
			t.Errorf("%s has no words for people", k)
		}
		if !strings.Contains(string(runbook), "| `"+string(k)+"` |") {
			t.Errorf("docs/runbook.md has no row for %s", k)
		}
		if !strings.Contains(string(readme), "`"+string(k)+"`") {
			t.Errorf("README.md does not name %s", k)
		}
	}
	if got := len(defaultText); got != len(Kinds) {
		t.Errorf("%d default texts for %d kinds", got, len(Kinds))
	}
}

// TestActionKinds: every action a step may take is an action kind, listed
// once, and check-config's words name them all.
func TestActionKinds(t *testing.T) {
	for i, a := range ActionKinds {
		if slices.Contains(ActionKinds[i+1:], a) {
			t.Errorf("%s is listed twice", a)
		}
	}
	for _, a := range StepActions {
		if !slices.Contains(ActionKinds, a) {
			t.Errorf("step action %s is not an action kind", a)
		}
		if !strings.Contains(StepActionNames(), string(a)) {
			t.Errorf("StepActionNames() %q leaves out %s", StepActionNames(), a)
		}
	}
	if got, want := StepActionNames(), "slack, nudge, cancel_and_nudge, log, alertmanager or webhook"; got != want {
		t.Errorf("StepActionNames() = %q, want %q", got, want)
	}
}
