// Package authority is the one source of kandev's current-turn rule
// (D1–D15 in docs/architecture.md): the SQL fragments every statement takes the
// rule from, and a pure Go resolver of the same rule used by tests, by the
// PostgreSQL fallback path and by single-session fencing checks.
//
// The rule, in short: a session's current turn is the first of its
// authority-eligible conversational turns under D1's total order
// (open before completed, started_at, created_at, id descending). A turn is
// authority-eligible when NOT flag(prompt_dispatch_pending) OR
// flag(prompt_dispatch_attempted) OR it has a message, and conversational when
// NOT flag(lifecycle_only).
package authority

import "fmt"

// Dialect names the database whose semantics a rule evaluation follows. The
// two dialects agree on everything kandev writes; on exotic metadata and on
// mixed timestamp shapes they differ, and the Go rule follows the dialect it
// stands in for.
type Dialect int

const (
	// SQLite compares timestamps as stored text and reads JSON the way
	// SQLite's json_valid/json_extract do.
	SQLite Dialect = iota
	// Postgres compares timestamps as instants and reads JSON the way a
	// ::jsonb cast does.
	Postgres
)

func (d Dialect) String() string {
	switch d {
	case SQLite:
		return "sqlite"
	case Postgres:
		return "postgres"
	}
	return fmt.Sprintf("dialect(%d)", int(d))
}

// Flag keys of turn metadata that the rule reads.
const (
	KeyDispatchPending   = "prompt_dispatch_pending"
	KeyDispatchAttempted = "prompt_dispatch_attempted"
	KeyLifecycleOnly     = "lifecycle_only"
)
