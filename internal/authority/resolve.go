package authority

import (
	"sort"

	"github.com/watchdogd/watchdogd/internal/kandevtime"
)

// Stamp is a timestamp column as the dialect compares it (D13: as
// stored, unclamped). On SQLite, Text is the stored text and the order is
// byte order, as SQLite's BINARY collation compares it; on PostgreSQL Text is
// kandevtime.Canonical of the instant, whose byte order is chronological.
type Stamp struct {
	Text  string
	Valid bool // false: SQL NULL
}

// StampOf builds the comparable form of a timestamp read as text (nil for
// NULL). In PostgreSQL mode the text is parsed; text PostgreSQL could not
// hold compares as NULL.
func StampOf(d Dialect, text *string) Stamp {
	if text == nil {
		return Stamp{}
	}
	if d == SQLite {
		return Stamp{Text: *text, Valid: true}
	}
	t, ok := kandevtime.Parse(*text)
	if !ok {
		return Stamp{}
	}
	return Stamp{Text: kandevtime.Canonical(t), Valid: true}
}

// Turn is what the rule reads of one task_session_turns row.
type Turn struct {
	ID          string
	StartedAt   Stamp
	CreatedAt   Stamp
	CompletedAt Stamp // invalid (NULL) while the turn is open
	Metadata    *string
	HasMessages bool // at least one task_session_messages row has turn_id = ID
}

// Open reports whether the turn has not completed.
func (t Turn) Open() bool { return !t.CompletedAt.Valid }

// Eligible is kandev's turnAuthorityPredicate.
func (f Flags) Eligible(hasMessages bool) bool {
	return !f.DispatchPending || f.DispatchAttempted || hasMessages
}

// Resolution is the rule's answer for one session. Indexes point into the
// slice given to Resolve; -1 means none.
type Resolution struct {
	Current int // first eligible conversational turn under D1
	Kandev  int // released kandev: newest eligible turn by keys 2–4
	// Newest is the newest eligible conversational turn by keys 2–4, open
	// or not: Current when no turn is open. The snapshot checks its
	// metadata with the others the answer rests on.
	Newest int
	// Open lists the open eligible conversational turns, oldest first by
	// D1 keys 2–4 (so Open[1] is the second-oldest).
	Open []int
	// Malformed counts turns whose metadata the dialect cannot parse.
	Malformed int
}

// Resolve applies the current-turn rule to one session's turns.
func Resolve(d Dialect, turns []Turn) Resolution {
	r := Resolution{Current: -1, Kandev: -1, Newest: -1}
	type cand struct {
		i            int
		eligible     bool
		conversation bool
	}
	cands := make([]cand, len(turns))
	for i, t := range turns {
		f, kind := TurnFlags(d, t.Metadata)
		if kind == Malformed {
			r.Malformed++
		}
		cands[i] = cand{i: i, eligible: f.Eligible(t.HasMessages), conversation: !f.LifecycleOnly}
	}
	for _, c := range cands {
		if !c.eligible {
			continue
		}
		t := turns[c.i]
		if r.Kandev < 0 || newer(t, turns[r.Kandev]) {
			r.Kandev = c.i
		}
		if !c.conversation {
			continue
		}
		if r.Current < 0 || Before(t, turns[r.Current]) {
			r.Current = c.i
		}
		if r.Newest < 0 || newer(t, turns[r.Newest]) {
			r.Newest = c.i
		}
		if t.Open() {
			r.Open = append(r.Open, c.i)
		}
	}
	sort.Slice(r.Open, func(a, b int) bool { return newer(turns[r.Open[b]], turns[r.Open[a]]) })
	return r
}

// Before reports whether a precedes b in D1's total order: open before
// completed, then started_at, created_at and id descending. NULL timestamps
// sort last within their key on both dialects (the SQL says NULLS LAST).
func Before(a, b Turn) bool {
	if a.Open() != b.Open() {
		return a.Open()
	}
	return newer(a, b)
}

// Newer reports whether a precedes b by D1 keys 2–4 (started_at, created_at,
// id descending): D1 among turns that are all open or all completed.
func Newer(a, b Turn) bool { return newer(a, b) }

// newer compares by D1 keys 2–4 only (kandev's released ordering).
func newer(a, b Turn) bool {
	if c := cmpDesc(a.StartedAt, b.StartedAt); c != 0 {
		return c < 0
	}
	if c := cmpDesc(a.CreatedAt, b.CreatedAt); c != 0 {
		return c < 0
	}
	return a.ID > b.ID
}

// cmpDesc returns -1 when a sorts first in a descending, NULLS LAST order.
func cmpDesc(a, b Stamp) int {
	switch {
	case a.Valid && !b.Valid:
		return -1
	case !a.Valid && b.Valid:
		return 1
	case !a.Valid:
		return 0
	case a.Text > b.Text:
		return -1
	case a.Text < b.Text:
		return 1
	}
	return 0
}
