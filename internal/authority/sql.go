package authority

import (
	"fmt"
	"regexp"
)

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Fragments returns the rule's SQL pair for a dialect and a turn table
// alias: predicate (authority-eligible AND conversational) joins a site's
// WHERE, orderBy (D1's four keys) replaces its ordering. Every watchdogd
// statement that resolves a current turn takes the rule from here, so the
// rule is written once per dialect.
func Fragments(d Dialect, alias string) (predicate, orderBy string) {
	mustIdent(alias)
	predicate = fmt.Sprintf("(%s AND NOT %s)", eligible(d, alias), FlagSQL(d, alias+".metadata", KeyLifecycleOnly))
	orderBy = fmt.Sprintf("CASE WHEN %[1]s.completed_at IS NULL THEN 0 ELSE 1 END, %[2]s", alias, keys234(d, alias))
	return predicate, orderBy
}

// KandevFragments is released kandev's rule ("kandev's view"):
// the authority predicate without the lifecycle exclusion, ordered by D1 keys
// 2–4 without the open-first key. watchdogd computes it to find questions
// kandev hides (shadowed_clarification).
func KandevFragments(d Dialect, alias string) (predicate, orderBy string) {
	mustIdent(alias)
	return eligible(d, alias), keys234(d, alias)
}

func eligible(d Dialect, alias string) string {
	meta := alias + ".metadata"
	return fmt.Sprintf("(NOT %s OR %s OR EXISTS (SELECT 1 FROM task_session_messages authority_m WHERE authority_m.turn_id = %s.id))",
		FlagSQL(d, meta, KeyDispatchPending), FlagSQL(d, meta, KeyDispatchAttempted), alias)
}

func keys234(d Dialect, alias string) string {
	nulls := ""
	if d == Postgres {
		// PostgreSQL sorts NULL first in a descending order, SQLite last.
		// started_at is NOT NULL in kandev's schema, so it keeps the plain
		// DESC that a backward scan of (task_session_id, started_at) serves.
		nulls = " NULLS LAST"
	}
	return fmt.Sprintf("%[1]s.started_at DESC, %[1]s.created_at DESC%[2]s, %[1]s.id DESC", alias, nulls)
}

// FlagSQL is D12's flag(key) on a metadata expression. A cheap text test
// comes first — the key, quoted, must appear in the text — so that the JSON
// is parsed only for the few turns that mention a flag at all (turn
// metadata carries a large runtime_config_snapshot). The test is part of the
// rule: the Go resolver applies it too (see Metadata.Flag), so a key
// spelled with JSON escapes (never written by kandev) is not a flag on any
// path. On SQLite the parse is guarded by json_valid so that no row can fail
// the statement; on PostgreSQL a malformed value fails the ::jsonb cast with
// SQLSTATE 22P02, which the snapshot catches under a savepoint before
// re-reading the rows as text for the Go rule.
func FlagSQL(d Dialect, metadataExpr, key string) string {
	mustIdent(key)
	if d == SQLite {
		return fmt.Sprintf("(CASE WHEN instr(%[1]s, '\"%[2]s\"') > 0 AND json_valid(%[1]s) THEN CAST(COALESCE(json_extract(%[1]s, '$.%[2]s'), '') AS TEXT) IN ('true', '1') ELSE 0 END)", metadataExpr, key)
	}
	return fmt.Sprintf("(CASE WHEN strpos(%[1]s, '\"%[2]s\"') > 0 THEN COALESCE((%[1]s)::jsonb ->> '%[2]s', '') IN ('true', '1') ELSE false END)", metadataExpr, key)
}

func mustIdent(s string) {
	if !identRE.MatchString(s) {
		panic(fmt.Sprintf("authority: %q is not an SQL identifier", s))
	}
}

// NewestFirst orders turns by D1 keys 2–4: within turns that are all open
// or all completed, the D1 order.
func NewestFirst(d Dialect, alias string) string {
	mustIdent(alias)
	return keys234(d, alias)
}
