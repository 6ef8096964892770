package alertmanager

import (
	"strings"

	"github.com/watchdogd/watchdogd/internal/model"
)

// Annotation bounds: Alertmanager's Slack notifier cuts a title at 1,024
// characters; a description of 4,096 fits a Slack attachment's text and
// an email's line with room to spare.
const (
	MaxSummary     = 1024
	MaxDescription = 4096
)

// inert is what rune r becomes in an annotation, "" for itself. It
// rewrites the characters a receiver's template could act on into
// characters that look like them and mean nothing, so that an annotation
// shows the agent's words wherever Alertmanager puts them, as written, and
// does none of what they might say.
//
// Alertmanager's templates do not escape for Slack, and its email
// template escapes for HTML: an annotation must carry no markup of
// either, and no entity (the email would show "&lt;" literally). So:
//
//   - < and > become ‹ and › (U+2039, U+203A): without them Slack reads
//     no <!channel>, no <@user>, no <url|label> link, and no > quote;
//   - *, _, ~ and ` become ∗ ˍ ∼ ˋ (U+2217, U+02CD, U+223C, U+02CB): no
//     bold, italics, strike or code can open. A zero-width space beside
//     them would keep the very characters, but whether it stops Slack's
//     markup depends on whether Slack takes it for a space, a letter or
//     neither, and in the third case it does not;
//   - & and @ stay, followed by a zero-width space (U+200B): an entity
//     (&lt;) and a named mention (@here, @channel, with link_names on)
//     are sequences that then cannot form, and the characters read as
//     written.
//
// None of these decompose into the character they replace (NFKC), so
// no normalising step brings the markup back. Bare URLs stay: Slack links
// them to where they say they go, as it links any text a person pastes.
func inert(r rune) string {
	switch r {
	case '<':
		return "\u2039"
	case '>':
		return "\u203a"
	case '*':
		return "\u2217"
	case '_':
		return "\u02cd"
	case '~':
		return "\u223c"
	case '`':
		return "\u02cb"
	case '&':
		return "&\u200b"
	case '@':
		return "@\u200b"
	}
	return ""
}

// Inert is s made inert for a receiver's templates (see inert) and cut to
// at most n characters, marked as cut when it was.
func Inert(s string, n int) string {
	s = model.Cut(s, 2*n) // what is written beyond is never shown
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		if sub := inert(r); sub != "" {
			b.WriteString(sub)
		} else {
			b.WriteRune(r)
		}
	}
	return model.Cut(b.String(), n)
}
