package notify

import (
	"strings"
	"testing"
)

// FuzzEscapers: the one-pass escapers say what the strings.Replacer form
// they replace says, on any text (UTF-8 or not).
func FuzzEscapers(f *testing.F) {
	for _, s := range []string{"", "plain", "<!channel> & *bold* _it_ ~s~ `code`", "<http://x|y> a b", "é<ü>&", "\xff<\xfe"} {
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
	})
}
