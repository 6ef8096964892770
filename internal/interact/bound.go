package interact

import "github.com/watchdogd/watchdogd/internal/notify/slack"

// MaxBody bounds the body of one request to the Slack endpoint: what the
// largest click Slack can send watchdogd takes, and not a byte more, since
// a body is read before it can be told from anyone's. A click carries the
// whole message clicked (Slack's block_actions payload), so the bound is
// the largest message watchdogd renders (slack.MaxText and the limits
// beside it), as Slack encodes it in the form field "payload":
//
//   - each character of text in charBytes: JSON escapes a character
//     outside ASCII as \uXXXX, one beyond the Basic Multilingual Plane as
//     two (12 bytes), and the form encoding turns each \ into %5C;
//   - the ASCII that is not text (buttons' values and action ids, the
//     link's URL) in asciiBytes: a quote is \" in JSON, %5C%22 in the form;
//   - each block's and button's own fields (type, block_id, the text
//     objects' types, a style, the confirm dialog of "Cancel turn and
//     nudge") in blockBytes and buttonBytes;
//   - the payload around the message (who clicked, the team, the channel,
//     the container, the trigger, the response URL, the bot's profile, the
//     button clicked once more) in envelopeBytes.
//
// About 284 KiB. The tests build the largest message of each kind and
// check that its payload, encoded so, fits; a renderer that makes larger
// messages raises slack's limits and so this bound.
//
// A form's submission carries the whole form back (Slack's
// view_submission, with what was typed): its text in charBytes, each
// option (its value, a print, and its fields) in optionBytes, each block
// in blockBytes, its private metadata in asciiBytes. The bound is the
// larger of the two; slack's form limits keep the form's under the
// message's.
const MaxBody = max(clickBody, formBody)

const (
	clickBody = charBytes*slack.MaxText + asciiBytes*(slack.MaxButtonValue*slack.MaxButtons+slack.MaxURL) +
		blockBytes*slack.MaxBlocks + buttonBytes*slack.MaxButtons + envelopeBytes
	formBody = charBytes*slack.MaxFormText + optionBytes*slack.MaxFormOptions + blockBytes*slack.MaxFormBlocks +
		asciiBytes*maxPrivateMetadata + envelopeBytes
	// maxPrivateMetadata is Slack's limit on a view's private metadata.
	maxPrivateMetadata = 3000
)

const (
	charBytes     = 16
	asciiBytes    = 6
	blockBytes    = 512
	buttonBytes   = 1 << 10
	envelopeBytes = 8 << 10
	optionBytes   = 512
)
