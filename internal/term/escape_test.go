package term

import (
	"testing"
	"unicode/utf8"
)

// TestEscape: what a terminal would act on is written out; the rest is
// kept byte for byte.
func TestEscape(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain", "Fix the login page", "Fix the login page"},
		{"unicode kept", "Réparer 登录 😀 ñ — “quotes” \\path\\to", "Réparer 登录 😀 ñ — “quotes” \\path\\to"},
		// Colour and a window title change (OSC 0, ended by BEL).
		{"ESC and OSC", "\x1b[31mred\x1b[0m \x1b]0;owned\x07", `\x1b[31mred\x1b[0m \x1b]0;owned\x07`},
		// A carriage return would overwrite the line; a newline forge a row.
		{"CR LF tab", "a\rb\nc\td", `a\rb\nc\td`},
		{"NUL and DEL", "a\x00b\x7f", `a\x00b\x7f`},
		// C1 as characters (CSI U+009B) and as bare bytes.
		{"C1", "a\u009b31mb\u0085", `a\u009b31mb\u0085`},
		{"invalid UTF-8", "a\x9b31m\xff\xfe", `a\x9b31m\xff\xfe`},
		// A right-to-left override would reorder what follows on screen.
		{"bidi", "user\u202eexe.txt \u2066x\u2069", `user\u202eexe.txt \u2066x\u2069`},
		{"separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
		// U+FFFD itself is a character like any other.
		{"replacement char", "a\uFFFDb", "a\uFFFDb"},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("%s: Escape(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
	if got := EscapeLines("title\x1b]0;x\x07\n• option\r\n"); got != "title\\x1b]0;x\\x07\n• option\\r\n" {
		t.Errorf("EscapeLines kept or lost the wrong thing: %q", got)
	}
}

// FuzzEscape: the output is valid UTF-8 with nothing a terminal acts on but
// the escapes' own printable text, and text needing no escape comes back
// unchanged.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]0;t\x07", "a\r\nb", "\xff\xc2\x9b", "\u202e\u2028é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Escape(%q) = %q: not UTF-8", s, out)
		}
		clean := utf8.ValidString(s)
		for _, r := range s {
			clean = clean && !unsafe(r)
		}
		for _, r := range out {
			if unsafe(r) {
				t.Fatalf("Escape(%q) = %q: holds %U", s, out, r)
			}
		}
		if clean != (out == s) {
			t.Fatalf("Escape(%q) = %q: clean input %v, unchanged %v", s, out, clean, out == s)
		}
	})
}
