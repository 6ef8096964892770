package scan

import "testing"

// TestStorable: kandev values a finding carries come out valid UTF-8
// without NUL; valid ones are untouched.
func TestStorable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Fix login", "Fix login"},       // the common case, returned as is
		{"é 😀 \t\n", "é 😀 \t\n"},         // valid UTF-8 of any kind stays
		{"a\x00b", "a\uFFFDb"},           // NUL, which PostgreSQL's text refuses
		{"a\xff\xfeb", "a\uFFFDb"},       // a run of bad bytes becomes one U+FFFD
		{"\xed\xa0\x80", "\uFFFD"},       // an encoded surrogate is not UTF-8
		{"ok\x00\xff", "ok\uFFFD\uFFFD"}, // both at once
	} {
		if got := storable(c.in); got != c.want {
			t.Errorf("storable(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if storablePtr(nil) != nil {
		t.Error("a missing id became one")
	}
}
