package kandevsql

import "github.com/watchdogd/watchdogd/internal/model"

// How much of a value the statements read (model.MaxText and friends say
// how much is kept).
const (
	// wholeMetadata is the largest message metadata read whole, in bytes.
	// Larger metadata is read apart, as a smaller object holding only the
	// members the rules and outputs read (see metadata.go), each string
	// cut (to readText characters, an option's to readOptionText) and a
	// question's options to model.MaxOptions+1 (one more than is kept, so that
	// the cut is seen and marked).
	wholeMetadata = 64 << 10
	// readText and readOptionText are how many characters of a text the
	// statements return: one more than is kept, so that Cut marks a value
	// that was longer.
	readText       = model.MaxText + 1
	readOptionText = model.MaxOptionText + 1
)
