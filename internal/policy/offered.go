package policy

import (
	"fmt"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// NoLongerOffered says why a click b must not be sent, checked right
// before it is: f, its finding as kandev shows it now, no longer offers an
// option the click chose (its id, its label or its question changed
// since the message or form the person clicked), or no longer holds; ""
// when it may go. A click chose from what it was shown: whatever now sits
// at that option's place is not what they chose, and nothing is sent.
//
// The words name what was chosen when the click says (b.What), and say
// the question is no longer waiting when f is nil: there is no question
// whose options changed, and nothing chosen to quote is no “”.
func NoLongerOffered(f *scan.Finding, b model.ClickBody) string {
	switch {
	case len(b.Prints) == 0 || f != nil && f.Offers(b.Prints):
		return ""
	case f == nil:
		return "the question is no longer waiting in kandev (answered there, or its turn moved on), so nothing was sent"
	case b.What == "":
		return "the question changed in kandev since the click: it no longer offers the option chosen, so nothing was sent; answer in kandev"
	}
	return fmt.Sprintf("the question changed in kandev since the click: it no longer offers “%s”, so nothing was sent; answer in kandev", b.What)
}
