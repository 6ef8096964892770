package cycle

import (
	"fmt"
	"io"
	"strings"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/term"
	"go.uber.org/zap"
)

// maxLoggedRows bounds the row ids on one log line: a kandev full of bad
// rows gets a count and the first ids, not a megabyte of log.
const maxLoggedRows = 100

// rowsSeen is a set of kandev rows already logged for one kind of fault.
// Each such row is logged once while it stays at fault, not on every
// cycle; a row that was fixed and breaks again is logged again.
type rowsSeen map[model.RowRef]bool

// badRowsSeen holds, for each kind of fault, the rows already logged; the
// daemon hands it from cycle to cycle across reloads.
type badRowsSeen struct {
	malformed, unparseable, future rowsSeen
}

// newRows returns the rows of this snapshot not logged before, and the set
// to remember for the next cycle: exactly this snapshot's rows, so that
// fixed rows are forgotten.
func newRows(seen rowsSeen, rows []model.RowRef) ([]model.RowRef, rowsSeen) {
	if len(rows) == 0 {
		return nil, nil // the usual cycle: nothing to log or remember
	}
	next := make(rowsSeen, len(rows))
	var fresh []model.RowRef
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

// logBadRows logs the rows newly found at fault: those kandev itself
// cannot read, and those holding a timestamp no kandev shape matches.
// watchdogd reads malformed metadata as "no flags set"; kandev's own batch
// pending-action query fails for every session while one exists. An
// unparseable timestamp, or one too far in the future to be true, is read
// as missing, so a finding that needed it (a turn's start, a question's)
// cannot be made. Either way an operator
// needs the ids to repair them. A row with no id to go by is named by what
// it belongs to (RowRef.String).
func (c *Cycle) logBadRows(snap *model.Snapshot) {
	var fresh []model.RowRef
	fresh, c.badRows.malformed = newRows(c.badRows.malformed, snap.Malformed)
	logRows(c.Log, fresh, len(c.badRows.malformed),
		"kandev rows kandev itself cannot read: malformed metadata, read as no flags (kandev's own pending-action query fails on them), or a NULL id",
		zap.Bool("fallback", snap.Fallback))
	fresh, c.badRows.unparseable = newRows(c.badRows.unparseable, snap.Unparseable)
	logRows(c.Log, fresh, len(c.badRows.unparseable),
		"kandev rows with a timestamp in no shape kandev writes, read as missing (findings that need it cannot be made)")
	fresh, c.badRows.future = newRows(c.badRows.future, snap.Future)
	logRows(c.Log, fresh, len(c.badRows.future),
		"kandev rows with a timestamp more than thresholds.future_tolerance after the scan, read as missing: kandev's database clock, "+
			"or the time zone of its PostgreSQL role (kandev writes some values with CURRENT_TIMESTAMP, local time), is off")
}

// logRows logs one line for the rows newly at fault, if any: how many are
// new, how many are at fault in all (each row once, though it may hold two
// bad values), and the first maxLoggedRows of the new ones.
func logRows(log *zap.Logger, fresh []model.RowRef, total int, msg string, more ...zap.Field) {
	if len(fresh) == 0 {
		return
	}
	log.Warn(msg, append([]zap.Field{zap.Int("new_rows", len(fresh)), zap.Int("rows", total), zap.Strings("ids", rowNames(fresh))}, more...)...)
}

// rowNames names the first maxLoggedRows rows.
func rowNames(rows []model.RowRef) []string {
	names := make([]string, 0, min(len(rows), maxLoggedRows))
	for _, r := range rows[:min(len(rows), maxLoggedRows)] {
		names = append(names, r.String())
	}
	return names
}

// NoteBadRows tells whoever runs scan by hand which rows were read only in
// part, as the daemon logs them: a session whose turn has no start, say,
// is missing from the table without one. Stderr keeps the JSON clean.
func NoteBadRows(w io.Writer, snap *model.Snapshot) {
	for _, l := range []struct {
		rows []model.RowRef
		what string
	}{
		{snap.Malformed, "kandev itself cannot read (malformed metadata, read as no flags; or a NULL id)"},
		{snap.Unparseable, "with a timestamp in no shape kandev writes, read as missing"},
		{snap.Future, "with a timestamp more than thresholds.future_tolerance after the scan (kandev's database clock or time zone?), read as missing"},
	} {
		rows, _ := newRows(nil, l.rows) // each row once
		if len(rows) == 0 {
			continue
		}
		names := rowNames(rows)
		if len(rows) > maxLoggedRows {
			names = append(names, fmt.Sprintf("and %d more", len(rows)-maxLoggedRows))
		}
		fmt.Fprintf(w, "note: %d kandev row(s) %s: %s\n", len(rows), l.what, term.Escape(strings.Join(names, ", ")))
	}
}
