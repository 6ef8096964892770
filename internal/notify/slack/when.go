package slack

import (
	"fmt"
	"regexp"
	"time"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"

	"github.com/watchdogd/watchdogd/internal/notify/words"
)

// A message is rendered when its action is decided and frozen in the ledger,
// then read in Slack any time later, by people in any time zone. So the
// times it names are Slack date tokens: each reader's client shows them in
// the reader's own zone, and "today" or "yesterday" relative to the day it
// is read, never to the day it was written.

// slackDate is a moment for mrkdwn, after a lead word ("since", "from"),
// which sits inside the token: Slack's clients capitalise a date word that
// opens the token's format ("Yesterday"). Clients that cannot show the
// token (and notifications) show the fallback, in UTC.
func slackDate(lead string, t time.Time) string {
	return fmt.Sprintf("<!date^%d^%s {date_short_pretty} at {time}|%s %s>", t.Unix(), lead, lead, utcStamp(t))
}

func utcStamp(t time.Time) string { return words.Stamp(t) }

// dateToken matches a Slack date token; its group is the fallback.
var dateToken = regexp.MustCompile(`<!date\^[0-9]+\^[^|>]*\|([^>]*)>`)

// fallbackDates shows date tokens as their fallback, for a terminal.
func fallbackDates(s string) string { return dateToken.ReplaceAllString(s, "$1") }

// LateAfter is how long after its decision a Slack step counts as sent
// late. A step normally goes out in the cycle that decides it; one held
// this long (quiet hours, a silence, the per-cycle budget, Slack's 429s or
// an outage) carries ages that were true when it was written, not when it
// is read.
const LateAfter = 5 * time.Minute

// SentLate marks a message that goes out long after it was written, so
// that "waiting 35 min" is read as of then, not as of the post's own time
// in Slack. The mark is added at delivery and the frozen body is not
// changed; the mark's text depends on the written time alone (an attempt
// that went out is found in Slack by its key, never by its text).
func SentLate(m Message, written time.Time) Message {
	note := mrkdwn(":clock3: Sent late: held back " + slackDate("from", written) +
		" by quiet hours, a silence, or Slack's limits or an outage. The ages above are as of then.")
	asOf := " (as of " + utcStamp(written) + ")"
	blocks := append([]slackapi.Block(nil), m.Blocks.BlockSet...)
	n := len(blocks)
	if c, ok := lastContext(blocks); ok && len(c.ContextElements.Elements) < 10 {
		grown := *c // the written message's block is not changed
		grown.ContextElements.Elements = append(append([]slackapi.MixedElement(nil), c.ContextElements.Elements...), note)
		blocks[n-1] = &grown
	} else if n < maxBlocks {
		blocks = append(blocks, slackapi.NewContextBlock("", note))
	}
	return Message{Text: clip(m.Text, maxFallback-utf8.RuneCountInString(asOf)) + asOf, Blocks: slackapi.Blocks{BlockSet: blocks}}
}

// lastContext is the message's closing context line, if it ends with one.
func lastContext(blocks []slackapi.Block) (*slackapi.ContextBlock, bool) {
	if len(blocks) == 0 {
		return nil, false
	}
	c, ok := blocks[len(blocks)-1].(*slackapi.ContextBlock)
	return c, ok
}
