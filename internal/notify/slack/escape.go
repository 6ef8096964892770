package slack

import "strings"

// escapeText makes agent text inert in mrkdwn: &, < and > become entities
// (no <!channel>, no links), and formatting characters get a zero-width
// space before them so they cannot open bold, italics, strikes or code.
func escapeText(s string) string {
	return replaceBytes(s, func(c byte) string {
		switch c {
		case '*', '_', '~', '`':
			return "\u200b" + string(c)
		}
		return entity(c)
	})
}

// entity is the mrkdwn entity for &, < and >, the characters Slack parses
// as markup; "" for any other byte.
func entity(c byte) string {
	switch c {
	case '&':
		return "&amp;"
	case '<':
		return "&lt;"
	case '>':
		return "&gt;"
	}
	return ""
}

// replaceBytes rewrites each ASCII byte of s that sub maps to a non-empty
// string, in one pass. A strings.Replacer built per call costs more than
// the text it escapes: in a storm's first cycle (thousands of messages
// rendered at once) its construction was most of what the cycle allocated.
func replaceBytes(s string, sub func(byte) string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		r := sub(s[i])
		if r == "" {
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(s) + len(r) + 8)
		}
		b.WriteString(s[last:i])
		b.WriteString(r)
		last = i + 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// escapeCode is for ids shown in `code`: no backticks, no markup.
func escapeCode(s string) string {
	return replaceBytes(s, func(c byte) string {
		if c == '`' {
			return "'"
		}
		return entity(c)
	})
}

// escapeURL keeps a link target from closing the <url|label> syntax.
func escapeURL(s string) string {
	return replaceBytes(s, func(c byte) string {
		switch c {
		case '<':
			return "%3C"
		case '>':
			return "%3E"
		case '|':
			return "%7C"
		case ' ':
			return "%20"
		}
		return ""
	})
}
