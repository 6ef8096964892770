// Package term makes text safe and compact to print: what kandev holds on a
// terminal, an error on one line of a log or a page.
package term

import (
	"strings"
	"unicode/utf8"
)

// Escape returns s with every character a terminal acts on rather than
// shows written out as a visible escape: C0 controls and DEL (ESC as \x1b,
// so no colour, cursor move or window-title change; CR, LF and tab as \r,
// \n and \t, so no line is overwritten and no table row forged), C1
// controls (\u009b), Unicode's line and paragraph separators and its
// bidirectional controls (\u202e, which would reorder what follows), and
// each byte that is not UTF-8 (\xff). Everything else is kept as it is,
// any script and emoji included; so is a backslash, so that a path reads
// as written (a literal "\x1b" in the text and an escaped ESC look alike,
// and neither does anything).
func Escape(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unsafe(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			hex(&b, uint32(s[i]), 2)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && unsafe(r):
			b.WriteString(`\x`)
			hex(&b, uint32(r), 2)
		case unsafe(r):
			b.WriteString(`\u`)
			hex(&b, uint32(r), 4)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// EscapeLines escapes each line of s and keeps the line breaks: for text
// whose lines are its own layout (a rendered message), each printed on a
// line of its own.
func EscapeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Escape(l)
	}
	return strings.Join(lines, "\n")
}

// unsafe reports whether a terminal would act on r rather than show it.
func unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0: // C0, DEL, C1
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi controls
		return true
	}
	return false
}

func hex(b *strings.Builder, v uint32, digits int) {
	const hexDigits = "0123456789abcdef"
	for shift := (digits - 1) * 4; shift >= 0; shift -= 4 {
		b.WriteByte(hexDigits[v>>shift&0xf])
	}
}
