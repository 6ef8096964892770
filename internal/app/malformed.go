package app

import (
	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/kandev"
)

// maxLoggedRows bounds the row ids on one log line: a kandev full of bad
// rows gets a count and the first ids, not a megabyte of log.
const maxLoggedRows = 100

// malformedSeen is the set of kandev rows kandev itself cannot read
// (metadata it cannot parse, a NULL id) that were already logged. Each such row is logged once while it stays
// malformed, not on every cycle; a row that was fixed and breaks again is
// logged again.
type malformedSeen map[kandev.RowRef]bool

// newlyMalformed returns the rows of this snapshot not logged before, and
// the set to remember for the next cycle: exactly this snapshot's rows, so
// that fixed rows are forgotten.
func newlyMalformed(seen malformedSeen, rows []kandev.RowRef) ([]kandev.RowRef, malformedSeen) {
	if len(rows) == 0 {
		return nil, nil // the usual cycle: nothing to log or remember
	}
	next := make(malformedSeen, len(rows))
	var fresh []kandev.RowRef
	for _, r := range rows {
		if next[r] {
			continue
		}
		next[r] = true
		if !seen[r] {
			fresh = append(fresh, r)
		}
	}
	return fresh, next
}

// logMalformed logs the rows newly found that kandev itself cannot read.
// watchdogd reads malformed metadata as "no flags set"; kandev's own batch
// pending-action query fails for every session while one exists, so an
// operator needs the ids to repair them. A row with a NULL id is named by
// what it belongs to (RowRef.String).
func (c *Cycle) logMalformed(snap *kandev.Snapshot) {
	fresh, next := newlyMalformed(c.malformed, snap.Malformed)
	c.malformed = next
	if len(fresh) == 0 {
		return
	}
	ids := make([]string, 0, min(len(fresh), maxLoggedRows))
	for _, r := range fresh[:min(len(fresh), maxLoggedRows)] {
		ids = append(ids, r.String())
	}
	c.Log.Warn("kandev rows kandev itself cannot read: malformed metadata, read as no flags (kandev's own pending-action query fails on them), or a NULL id",
		zap.Int("new_rows", len(fresh)), zap.Int("rows", len(snap.Malformed)), zap.Strings("ids", ids), zap.Bool("fallback", snap.Fallback))
}
