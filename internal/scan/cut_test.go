package scan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/watchdogd/watchdogd/internal/model"
)

// TestQuestionTextIsCut: a question's text is cut where it is decoded, to
// what Slack can show, and says so; text within the limits is whole.
func TestQuestionTextIsCut(t *testing.T) {
	long := func(n int) string { return strings.Repeat("é", n) }
	options := func(n int, label string) []map[string]string {
		var out []map[string]string
		for range n {
			out = append(out, map[string]string{"option_id": "o", "label": label, "description": label})
		}
		return out
	}
	cut := func(s string, n int) string { return string([]rune(s)[:n-5]) + model.CutMark }
	for _, c := range []struct {
		name                string
		title, prompt       string
		options             []map[string]string
		wantTitle, wantText string
		wantOptions         int
		wantLabel           string
	}{
		// At the limits: nothing is cut.
		{"at the limits", long(3000), long(3000), options(100, long(75)), long(3000), long(3000), 100, long(75)},
		// One past them: cut, and marked.
		{"past the limits", long(3001), long(3001), options(101, long(76)), cut(long(3001), 3000), cut(long(3001), 3000), 100, cut(long(76), 75)},
	} {
		raw, _ := json.Marshal(map[string]any{"pending_id": "p1", "question_id": "q1",
			"question": map[string]any{"id": "q1", "title": c.title, "prompt": c.prompt, "options": c.options}})
		m := model.Message{ID: "m1", Author: "agent", Type: "clarification_request", Meta: meta(string(raw))}
		q := question(m)
		if q.Title != c.wantTitle || q.Prompt != c.wantText || len(q.Options) != c.wantOptions || q.Options[0].Label != c.wantLabel || q.Options[0].Description != c.wantLabel {
			t.Errorf("%s: title %d characters, prompt %d, %d options, the first %q", c.name,
				len([]rune(q.Title)), len([]rune(q.Prompt)), len(q.Options), q.Options[0])
		}
		if last := q.Options[len(q.Options)-1]; (len(c.options) > 100) != (last == Option{Label: model.CutMark}) {
			t.Errorf("%s: the last option is %q", c.name, last)
		}
	}
}
