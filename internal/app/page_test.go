package app

import (
	"strings"
	"testing"
)

// TestPageNamesUntitledTasks: an episode whose task has no title is still
// a visible link on the status page, named by the task's id.
func TestPageNamesUntitledTasks(t *testing.T) {
	data := pageData{Episodes: []episodeView{{Kind: "stalled_turn", TaskID: "t1", Link: "http://kandev/t/t1", Since: "2026-11-30T12:00:00Z"}},
		LastScan: "never", Role: "leader"}
	var b strings.Builder
	if err := pageTemplate.Execute(&b, data); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<a href="http://kandev/t/t1">task t1</a>`) {
		t.Fatalf("no link named after the task's id:\n%s", b.String())
	}
}
