package policy

import (
	"testing"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// TestNoLongerOffered: a click goes when its finding still offers every
// option it chose; else the words say why not, quoting what was chosen
// when the click says, and never an empty “”.
func TestNoLongerOffered(t *testing.T) {
	q := scan.Question{ID: "q1", Options: []scan.Option{{ID: "a", Label: "pgx"}}}
	offers := &scan.Finding{Kind: model.KindUnansweredClarification, Detail: &scan.Detail{Questions: []scan.Question{q}}}
	changed := &scan.Finding{Kind: model.KindUnansweredClarification, Detail: &scan.Detail{Questions: []scan.Question{
		{ID: "q1", Options: []scan.Option{{ID: "a", Label: "drop"}}}}}}
	chose := model.ClickBody{What: "pgx", Prints: []string{scan.OptionPrint(q, q.Options[0])}}
	unnamed := chose
	unnamed.What = ""
	cases := []struct {
		name string
		f    *scan.Finding
		b    model.ClickBody
		want string
	}{
		{"still offered", offers, chose, ""},
		// A click that chose no option (snooze, resolve) always goes.
		{"nothing chosen", nil, model.ClickBody{}, ""},
		{"the option changed", changed, chose,
			"the question changed in kandev since the click: it no longer offers “pgx”, so nothing was sent; answer in kandev"},
		{"the option changed, unnamed", changed, unnamed,
			"the question changed in kandev since the click: it no longer offers the option chosen, so nothing was sent; answer in kandev"},
		// No finding: no question waits, whose options could change.
		{"no longer waiting", nil, chose, "the question is no longer waiting in kandev (answered there, or its turn moved on), so nothing was sent"},
	}
	for _, c := range cases {
		if got := NoLongerOffered(c.f, c.b); got != c.want {
			t.Errorf("%s: %q\nwant %q", c.name, got, c.want)
		}
	}
}
