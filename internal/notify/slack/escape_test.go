package slack

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/watchdogd/watchdogd/internal/term"
)

// FuzzEscapers: the one-pass escapers say what the strings.Replacer form
// they replace says, on any text (UTF-8 or not), and the console's leaves
// nothing a terminal acts on.
func FuzzEscapers(f *testing.F) {
	for _, s := range []string{"", "plain", "<!channel> & *bold* _it_ ~s~ `code`", "<http://x|y> a b", "é<ü>&", "\xff<\xfe", "\x1b]0;t\x07\r\nx\u009b"} {
		f.Add(s)
	}
	text := func(s string) string {
		s = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
		return strings.NewReplacer("*", "\u200b*", "_", "\u200b_", "~", "\u200b~", "`", "\u200b`").Replace(s)
	}
	code := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "`", "'")
	url := strings.NewReplacer("<", "%3C", ">", "%3E", "|", "%7C", " ", "%20")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := escapeText(s), text(s); got != want {
			t.Errorf("escapeText(%q) = %q, want %q", s, got, want)
		}
		if got, want := escapeCode(s), code.Replace(s); got != want {
			t.Errorf("escapeCode(%q) = %q, want %q", s, got, want)
		}
		if got, want := escapeURL(s), url.Replace(s); got != want {
			t.Errorf("escapeURL(%q) = %q, want %q", s, got, want)
		}
		// The console prints a message's text through term.EscapeLines:
		// its line breaks stay, and nothing else a terminal acts on.
		out := term.EscapeLines(s)
		control := strings.IndexFunc(out, func(r rune) bool { return r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0) })
		if !utf8.ValidString(out) || control >= 0 || strings.Count(out, "\n") != strings.Count(s, "\n") {
			t.Errorf("term.EscapeLines(%q) = %q: a control at %d, valid UTF-8 %v", s, out, control, utf8.ValidString(out))
		}
	})
}
