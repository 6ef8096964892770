package model

import "unicode/utf8"

// How much of one agent-written value watchdogd reads. kandev stores what
// an agent writes whole: a task's title, a question's prompt, its options,
// a permission's title. No output of watchdogd shows more of one value
// than a Slack section holds (Slack's limits are the largest: the scan
// table shows 60 characters, and the console, the ledger's frozen messages
// and the status page show what Slack is sent), so each is cut to that
// where it is read, in the statement, before it is decoded whole, held,
// stored in the ledger or served, and marked as cut: what one agent writes
// must not be able to take the watchdog past its pod's memory.
const (
	// MaxText is the most characters of one text kept: a title, a prompt,
	// a permission's title. It is Slack's limit for a section's text.
	MaxText = 3000
	// MaxOptionText is the most characters of an option's label, and of
	// its description: Slack's limit for an option's text (and a button's).
	// A question's options share one section between them.
	MaxOptionText = 75
	// MaxOptions is the most options of one question kept: Slack's limit
	// for one select menu.
	MaxOptions = 100
	// CutMark ends a value that was cut, so that no one takes it for all
	// the agent wrote.
	CutMark = "… cut"
)

// Cut returns s when it holds at most n characters, else its first
// characters followed by CutMark, n characters in all. It counts and cuts
// by UTF-8 sequence (an invalid byte counts as one character) and never
// converts the whole of s, which may be megabytes.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s // never more characters than bytes
	}
	keep := max(n-utf8.RuneCountInString(CutMark), 0)
	count, end := 0, 0
	for i := range s {
		if count == keep {
			end = i
		}
		if count == n {
			return s[:end] + CutMark
		}
		count++
	}
	return s
}

// CutOptions keeps at most n of a question's options: when there were
// more, the last one kept is replaced by mark, so that the list says it is
// not all.
func CutOptions[T any](opts []T, n int, mark T) []T {
	if len(opts) <= n {
		return opts
	}
	return append(opts[:n-1:n-1], mark)
}
