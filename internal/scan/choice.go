package scan

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// Choices are named by a print: a short hash of what a person sees and
// what kandev is sent. A button, or an option of a form, carries the
// print of the option it was made for, and a click on it is taken only
// while the finding still offers an option with that print: the option a
// person chose, never whatever sits at its place after kandev's options
// changed. A print is small whatever the agent wrote (Slack bounds a
// button's value to 2,000 characters, a select option's to 150).

// OptionPrint is the print of option o of question q: the question's id,
// the option's id and its label.
func OptionPrint(q Question, o Option) string {
	return printOf("q", q.ID, o.ID, o.Label)
}

// PermissionPrint is the print of a permission request's option: the
// request's id and the option's id, name and kind.
func PermissionPrint(requestID string, o PermissionOption) string {
	return printOf("p", requestID, o.ID, o.Name, o.Kind)
}

// QuestionPrint is the print of a question of a bundle: its id.
func QuestionPrint(q Question) string {
	return printOf("Q", q.ID)
}

func printOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// OptionAt is the place (question, option) of the option of f's
// questions whose print is p; ok is false when f offers none.
func (f Finding) OptionAt(p string) (q, o int, ok bool) {
	if f.Detail == nil || p == "" {
		return 0, 0, false
	}
	for i, qu := range f.Detail.Questions {
		for j, op := range qu.Options {
			if OptionPrint(qu, op) == p {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}

// PermissionAt is the place of f's permission option whose print is p.
func (f Finding) PermissionAt(p string) (int, bool) {
	if f.Detail == nil || p == "" {
		return 0, false
	}
	i := slices.IndexFunc(f.Detail.PermissionOptions, func(o PermissionOption) bool {
		return PermissionPrint(f.Detail.PermissionRequestID, o) == p
	})
	return i, i >= 0
}

// Offers says whether f still offers every option printed in prints (a
// question's option or a permission's): none of them changed its id, its
// label, or its question since the click was decided.
func (f Finding) Offers(prints []string) bool {
	for _, p := range prints {
		if _, _, ok := f.OptionAt(p); ok {
			continue
		}
		if _, ok := f.PermissionAt(p); !ok {
			return false
		}
	}
	return true
}
