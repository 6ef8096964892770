package slack

// The most a message Render makes can hold. A click on a button sends the
// whole message back to watchdogd (Slack's block_actions payload carries
// it), so these bound what the HTTP mode's endpoint must read of a
// request before it can tell Slack's from anyone's (interact.MaxBody is
// derived from them). A renderer that makes larger messages must raise
// them, and the tests that build the largest message check both.
const (
	// MaxText is the most characters of text in one message: its blocks'
	// texts, the buttons' labels counted against them (maxMessageText;
	// past it, when a headline and a footer alone are that long, one
	// notice that the rest is not shown), and its fallback text
	// (maxFallback).
	MaxText = maxMessageText + maxNotice + maxFallback
	// MaxBlocks is the most blocks of one message (Slack's limit).
	MaxBlocks = maxBlocks
	// MaxButtons is the most buttons of one message: an actions block of
	// the options' buttons (maxButtons) and the link to kandev, and one of
	// snooze and resolve.
	MaxButtons = maxButtons + 1 + 3
	// MaxURL is the most characters of the one URL a message carries
	// outside its text (the link button's): Slack refuses a longer one,
	// so no click can carry it.
	MaxURL = 3000
	// MaxButtonValue is the most characters of a button's value and of its
	// action_id together: an episode id (a UUID), the button's name, two
	// places and a snooze's length.
	MaxButtonValue = 200
)

// The most a form Form makes can hold. Its submission (Slack's
// view_submission) carries the whole form back, every option of every
// select, with what was typed, so these bound the endpoint's reads like
// the message's limits (interact.MaxBody is derived from both).
const (
	// MaxFormText is the most characters of a form's text: its labels,
	// its options' labels, and what its text fields take typed.
	MaxFormText = 7000
	// MaxFormOptions is the most options of all of a form's selects.
	MaxFormOptions = 200
	// MaxFormBlocks is the most blocks of a form: a select and a text
	// field per question.
	MaxFormBlocks = 2 * maxFormQuestions
)

// maxNotice is room for the notice that what follows is not shown
// (moreNotShown) and the line break before it.
const maxNotice = 64
