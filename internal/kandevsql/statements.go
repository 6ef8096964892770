// Package kandevsql writes the statements watchdogd reads kandev's
// database with, for each dialect: the active sessions with their
// current-turn probes, each session's turns when the probes cannot be used,
// the current turns' messages, and message metadata too large to read
// whole. It only builds text; internal/kandev runs the statements and
// reads their rows. See docs/architecture.md, "The current-turn rule".
package kandevsql

import (
	"fmt"
	"strings"

	"github.com/watchdogd/watchdogd/internal/authority"
)

// activeStates are the non-terminal session states. Listing them (rather than
// NOT IN the terminal ones) lets the state index serve the scan, so its cost
// grows with active sessions, not with history.
const activeStates = `('CREATED', 'STARTING', 'RUNNING', 'IDLE', 'WAITING_FOR_INPUT')`

// activeCTE selects the active sessions of non-archived tasks; with
// oneTask, only those of the task given as the statement's one parameter (a
// fencing check re-reads one task right before an action is delivered).
func activeCTE(d authority.Dialect, oneTask bool) string {
	started := "CAST(s.started_at AS TEXT)"
	filter := ""
	if d == authority.Postgres {
		started = "s.started_at"
	}
	if oneTask {
		filter = " AND s.task_id = ?"
		if d == authority.Postgres {
			filter = " AND s.task_id = $1"
		}
	}
	// Tasks are looked up by primary key per active session. On PostgreSQL a
	// LATERAL join with LIMIT 1 (a fence against its pull-up into a plain
	// join) keeps it that way: a hash join would read every task,
	// and the scan's cost would grow with history.
	join := "JOIN tasks t ON t.id = s.task_id AND t.archived_at IS NULL"
	if d == authority.Postgres {
		join = "JOIN LATERAL (SELECT tt.title, tt.workspace_id, tt.metadata FROM tasks tt WHERE tt.id = s.task_id AND tt.archived_at IS NULL LIMIT 1) t ON true"
	}
	// The title is cut (see MaxText): an agent may have written megabytes.
	// SQLite's substr of a text stops at a NUL, so its bytes are cut
	// instead, four per character: enough characters, however encoded,
	// for Cut to see that there were more.
	title := fmt.Sprintf("substr(t.title, 1, %d)", readText)
	if d == authority.SQLite {
		title = fmt.Sprintf("CAST(substr(CAST(t.title AS BLOB), 1, %d) AS TEXT)", 4*readText)
	}
	return fmt.Sprintf(`active AS (
  SELECT s.id AS session_id, s.task_id, s.state, CAST(s.is_primary AS INTEGER) <> 0 AS is_primary,
         %s AS session_started_at, %s AS title, t.workspace_id, t.metadata AS task_metadata
  FROM task_sessions s %s
  WHERE s.state IN %s%s
)`, started, title, join, activeStates, filter)
}

// queuedJoin counts queued_messages per session in one pass over that small
// table; old kandev databases have none.
func queuedJoin(hasQueued bool) (join, col string) {
	if !hasQueued {
		return "", "0"
	}
	return "LEFT JOIN (SELECT session_id, COUNT(*) AS n FROM queued_messages GROUP BY session_id) q ON q.session_id = r.session_id", "COALESCE(q.n, 0)"
}

// asText selects a column as text on SQLite, as it is on PostgreSQL. A
// timestamp column would otherwise come back as time.Time from modernc,
// which rewrites the text and fails the scan on one unparseable value. A
// value put into JSON must not be a BLOB: SQLite keeps whatever a writer
// binds, so a TEXT column written from a []byte holds one, and its JSON
// functions refuse it ("JSON cannot hold BLOB values"), failing the whole
// statement. PostgreSQL's text columns hold text only.
func asText(d authority.Dialect, col string) string {
	if d == authority.SQLite {
		return "CAST(" + col + " AS TEXT)"
	}
	return col
}

// badExpr names a turn whose metadata the dialect cannot parse. On SQLite
// it tests json_valid; on PostgreSQL it forces the ::jsonb cast (the
// condition can never hold), so a malformed value fails the statement and
// sends the snapshot down the fallback path, which counts in Go. only, if
// set, is a condition the turn must meet to be tested at all.
func badExpr(d authority.Dialect, alias, only string) string {
	if only != "" {
		only += " AND "
	}
	if d == authority.SQLite {
		return fmt.Sprintf("CASE WHEN %[2]s%[1]s.metadata IS NOT NULL AND NOT json_valid(%[1]s.metadata) THEN CAST(%[1]s.id AS TEXT) END", alias, only)
	}
	return fmt.Sprintf("CASE WHEN %[2]s%[1]s.metadata IS NOT NULL AND (%[1]s.metadata)::jsonb IS NULL THEN %[1]s.id END", alias, only)
}

// Sessions is the fast path: every active session of non-archived
// tasks, each with correlated probes into its own turns, run back to back
// so that the pages a session's probes touch are read once and then hit in
// the cache:
//
//   - its open eligible conversational turns (usually none or one), read by
//     visiting the session's turns and testing completed_at first, so the
//     rule's flags are evaluated on open turns only;
//   - kandev's view: its newest eligible turn by D1 keys 2–4 (lifecycle
//     turns included), walking the (task_session_id, started_at) index
//     newest first and stopping at the first match, with that turn's
//     lifecycle flag and updated_at (a restart's instant, when it closed
//     the turn);
//   - only when kandev's turn is a lifecycle turn, the same walk for the
//     newest eligible conversational turn, with its updated_at.
//
// Go then applies D1's first key: the current turn is the newest open turn
// when any is open, else the newest eligible conversational one — kandev's
// turn itself unless it is a lifecycle turn. Each probe returns a JSON
// array, so ids and timestamps of any spelling come back intact. Metadata
// validity is checked on the turns the answer rests on.
//
// The rows come in no particular order (Go sorts them): an ORDER BY would
// hold every row back until the last session was probed. Without one,
// PostgreSQL sends each row as it is done (the queued counts are the hash
// join's small side on an analyzed database) and the client decodes while
// the server works; SQLite skips its sorter (measured: see
// docs/benchmarks.md, appendix).
func Sessions(d authority.Dialect, hasQueued, oneTask bool, probeIndex string) string {
	pred, _ := authority.Fragments(d, "tu")
	_, korder := authority.KandevFragments(d, "tu")
	newest := authority.NewestFirst(d, "tu")
	hint := ""
	if probeIndex != "" {
		hint = ` INDEXED BY "` + strings.ReplaceAll(probeIndex, `"`, `""`) + `"`
	}
	kandevPred := func(alias string) string { p, _ := authority.KandevFragments(d, alias); return p }
	rulePred := func(alias string) string { p, _ := authority.Fragments(d, alias); return p }
	arr, agg := "json_array", "json_group_array"
	if d == authority.Postgres {
		arr, agg = "json_build_array", "json_agg"
	}
	lifecycle := authority.FlagSQL(d, "tu.metadata", authority.KeyLifecycleOnly)
	kandevCols := fmt.Sprintf("%s(%s, %s, %s, %s, CAST(%s AS TEXT), %s)%s", arr, asText(d, "tu.id"), asText(d, "tu.started_at"), asText(d, "tu.completed_at"),
		badExpr(d, "tu", ""), lifecycle, asText(d, "tu.updated_at"), textCast(d))
	// On PostgreSQL the open-turn probe names kandev's turn (k.id) and
	// leaves its metadata alone: that turn is usually the open one, and its
	// own column already forces it through ::jsonb, so it is not parsed
	// twice (measured: see the appendix of docs/benchmarks.md).
	openOnly := ""
	if d == authority.Postgres {
		openOnly = "tu.id IS DISTINCT FROM k.id"
	}
	open := fmt.Sprintf(`(SELECT %[1]s(%[2]s(%[8]s, %[3]s, %[4]s, %[5]s))%[6]s FROM task_session_turns tu
       WHERE tu.task_session_id = a.session_id AND tu.completed_at IS NULL AND %[7]s)`,
		agg, arr, asText(d, "tu.started_at"), asText(d, "tu.created_at"), badExpr(d, "tu", openOnly), textCast(d), pred, asText(d, "tu.id"))
	conversational := func(isLifecycle, session string) string {
		return fmt.Sprintf("CASE WHEN %s THEN %s END", isLifecycle, newestProbe(d,
			fmt.Sprintf("%s(%s, %s, %s, %s, %s)%s", arr, asText(d, "tu.id"), asText(d, "tu.started_at"), asText(d, "tu.completed_at"), badExpr(d, "tu", ""),
				asText(d, "tu.updated_at"), textCast(d)),
			hint, session, rulePred, newest))
	}
	qjoin, qcol := queuedJoin(hasQueued)
	if d == authority.Postgres {
		kandev := newestProbe(d, "tu.id, "+kandevCols+" AS turn, "+lifecycle+" AS lifecycle", hint, "a.session_id", kandevPred, korder)
		return fmt.Sprintf(postgresSessions, activeCTE(d, oneTask), qcol, open, conversational("k.lifecycle", "a.session_id"), kandev,
			strings.ReplaceAll(qjoin, "r.session_id", "a.session_id"))
	}
	return fmt.Sprintf(sqliteSessions, activeCTE(d, oneTask), open, newestProbe(d, kandevCols, hint, "a.session_id", kandevPred, korder), qcol,
		conversational("json_extract(f.kandev_turn, '$[4]') = '1'", "f.session_id"), strings.ReplaceAll(qjoin, "r.session_id", "f.session_id"))
}

// postgresSessions is the sessions statement's frame on PostgreSQL: the
// active sessions, the queued count, the open turns, kandev's view and the
// conversational probe. kandev's view is a LATERAL join, whose lifecycle
// flag, a column of its own, decides the conversational probe in the same
// SELECT: no materialized CTE (which can spill to a temp file on a large
// database) and no second parse of the view's JSON (measured: see
// docs/benchmarks.md, appendix).
const postgresSessions = `WITH %s
SELECT a.session_id, a.task_id, a.state, a.is_primary, a.session_started_at, a.title, a.workspace_id, a.task_metadata,
       %s AS queued, %s AS open_turns, k.turn AS kandev_turn, %s AS conversational_turn
FROM active a LEFT JOIN LATERAL %s k ON true
%s`

// sqliteSessions is the same frame on SQLite, where kandev's view is a
// column: the materialized CTE holds it, so that the conversational probe
// reads its lifecycle flag instead of probing it again.
const sqliteSessions = `WITH %s,
probed AS MATERIALIZED (
  SELECT a.*, %s AS open_turns, %s AS kandev_turn FROM active a
)
SELECT f.session_id, f.task_id, f.state, f.is_primary, f.session_started_at, f.title, f.workspace_id, f.task_metadata,
       %s AS queued, f.open_turns, f.kandev_turn, %s AS conversational_turn
FROM probed f
%s`

// newestProbe selects cols from a session's newest turn (alias tu) that
// satisfies pred, by D1 keys 2–4 (order).
//
// On SQLite, ORDER BY over all three keys makes SQLite sort (the index
// serves only started_at): a sorter per session, even for the block of equal
// started_at only. So the probe walks the (task_session_id, started_at)
// index newest first and stops at the first match, and counts, in that index
// alone, the session's turns sharing its started_at. Only when another turn
// does (a tie, rare) does it run the split form: the newest matching
// started_at, then the tie-break by created_at and id among the matching
// turns that share it. The count takes every turn, matching or not, so it
// can only send a session to the split form needlessly, never keep one from
// it. started_at is NOT NULL in kandev's schema; IS still keeps a NULL from
// matching nothing. PostgreSQL's incremental sort already stops after the
// first group of equal started_at.
func newestProbe(d authority.Dialect, cols, hint, session string, pred func(alias string) string, order string) string {
	if d == authority.Postgres {
		return fmt.Sprintf(`(SELECT %s FROM task_session_turns tu%s
       WHERE tu.task_session_id = %s AND %s ORDER BY %s LIMIT 1)`, cols, hint, session, pred("tu"), order)
	}
	split := fmt.Sprintf(`(SELECT %[1]s FROM task_session_turns tu%[2]s
       WHERE tu.task_session_id = %[3]s AND %[4]s AND tu.started_at IS (SELECT tn.started_at FROM task_session_turns tn%[2]s
         WHERE tn.task_session_id = %[3]s AND %[5]s ORDER BY tn.started_at DESC LIMIT 1)
       ORDER BY tu.created_at DESC, tu.id DESC LIMIT 1)`, cols, hint, session, pred("tu"), pred("tn"))
	return fmt.Sprintf(`(SELECT CASE WHEN x.ties > 1 THEN %[5]s ELSE x.cols END FROM (SELECT %[1]s AS cols,
         (SELECT count(*) FROM task_session_turns tt%[2]s WHERE tt.task_session_id = %[3]s AND tt.started_at IS tu.started_at) AS ties
       FROM task_session_turns tu%[2]s WHERE tu.task_session_id = %[3]s AND %[4]s ORDER BY tu.started_at DESC LIMIT 1) x)`,
		cols, hint, session, pred("tu"), split)
}

// textCast reads a PostgreSQL json value as text.
func textCast(d authority.Dialect) string {
	if d == authority.Postgres {
		return "::text"
	}
	return ""
}

// SessionTurns is PostgreSQL's fallback after a malformed metadata value
// failed the fast statement: the same selection, with every turn of every
// active session and its metadata as raw text, resolved by the Go rule.
func SessionTurns(d authority.Dialect, hasQueued, oneTask bool) string {
	qjoin, qcol := queuedJoin(hasQueued)
	return fmt.Sprintf(`WITH %[1]s
SELECT r.session_id, r.task_id, r.state, r.is_primary, r.session_started_at, r.title, r.workspace_id, r.task_metadata,
       %[2]s AS queued, tu.id, %[3]s, %[4]s, %[5]s, %[7]s, tu.metadata,
       EXISTS (SELECT 1 FROM task_session_messages m WHERE m.turn_id = tu.id)
FROM active r
LEFT JOIN task_session_turns tu ON tu.task_session_id = r.session_id
%[6]s
ORDER BY r.session_id`,
		activeCTE(d, oneTask), qcol, asText(d, "tu.started_at"), asText(d, "tu.created_at"), asText(d, "tu.completed_at"), qjoin, asText(d, "tu.updated_at"))
}

// Messages reads what the rules need from the current turns' messages,
// given their ids, in one pass over each turn's messages: the newest plain
// agent update (updated_at and type: one value however long the turn), and
// every agent status and script_execution row (a user's cancel and a boot
// script are told apart by metadata, read in Go; neither is activity) and
// every clarification and permission request, whole; and of each
// user-authored row its id, type and creation only (whether the agent
// answered the last of them; their text is not needed); and how many
// messages the turn holds (a boot turn holds one). Content and metadata
// are cut where they are read (bound.go, metadata.go): an agent may have
// written megabytes.
//
// The newest update is the newest not after the limit given as the second
// parameter (the scan's instant and a tolerance); updates after it are
// counted, for the snapshot to name, and read as missing.
//
// Each turn yields its position in the ids given (from 0) and, on SQLite,
// one JSON array [newest updated_at, its type, [rows…], [user rows…], the
// count of updates after the limit, the count of messages, and a seventh
// field]; on PostgreSQL the same six as columns (each list NULL when it is
// empty). Each row's eighth field is, when its metadata is too big to
// read whole, what to read it by (messageMetadata). On PostgreSQL the type
// comes from the one ordered aggregate (the newest row first, as MAX picks
// its updated_at; NULLs last, as MAX ignores them).
// On SQLite the newest update is found by instant (julianday, millisecond
// resolution), because kandev's timestamp shapes do not sort as text; the
// row's own text comes back through SQLite's bare-column rule for max(),
// which holds only while the statement has no other min() or max().
//
// julianday reads every shape Go's parser takes but two (a lower-case "t",
// an offset without a colon), and a MAX over it would pass over such a row
// however new it is. So the MAX ranks a value julianday cannot read above
// every instant, and the seventh field, "1", says that one did: the reader
// then reads those turns again with unordered set, which returns each such
// update as a row of its own for Go to weigh, beside the MAX of the rest.
// The rank is cheaper than testing every row for such a value in the one
// statement, and the second statement runs only when one exists.
//
// On SQLite the rows' list is json_group_array's own value, which is "[]"
// when no row passes the filter and carries JSON's subtype, so json_array
// nests it as an array; COALESCE would drop the subtype and nest it as a
// string. Each value it puts into JSON is cast to text, since one BLOB
// would fail the statement (see asText). Measured: see
// docs/benchmarks.md, appendix.
func Messages(d authority.Dialect, unordered bool) string {
	meta, big := messageMetadata(d)
	interesting := `((m.author_type = 'agent' AND m.type IN ('status', 'script_execution')) OR m.type IN ('clarification_request', 'permission_request'))`
	plain := `m.author_type = 'agent' AND m.type NOT IN ('status', 'script_execution')`
	// A question or permission row is read whole whoever wrote it, so
	// the user rows leave them out: no row comes back twice.
	user := `m.author_type = 'user' AND m.type NOT IN ('clarification_request', 'permission_request')`
	if d == authority.SQLite {
		// An update after the limit (the scan's instant and a tolerance)
		// cannot be true: it is left out of the newest and counted, so
		// that the agent's real last output stays known.
		ahead := `julianday(m.updated_at) > julianday(?2)`
		kept := plain + ` AND NOT COALESCE(` + ahead + `, 0)`
		instant, flag := "COALESCE(julianday(m.updated_at), CASE WHEN m.updated_at IS NOT NULL THEN 1e300 END)", ""
		if unordered {
			instant = "julianday(m.updated_at)"
			interesting += ` OR (` + plain + ` AND julianday(m.updated_at) IS NULL AND m.updated_at IS NOT NULL)`
		} else {
			flag = `,
            CASE WHEN MAX(CASE WHEN ` + kept + ` THEN ` + instant + ` END) >= 1e300 THEN '1' END`
		}
		newest := `MAX(CASE WHEN ` + kept + ` THEN ` + instant + ` END)`
		return `WITH cur(n, turn_id) AS (SELECT key, value FROM json_each(?1))
SELECT c.n,
  (SELECT json_array(
            CASE WHEN ` + newest + ` IS NOT NULL THEN CAST(m.updated_at AS TEXT) END,
            CASE WHEN ` + newest + ` IS NOT NULL THEN CAST(m.type AS TEXT) END,
            json_group_array(json_array(CAST(m.id AS TEXT), CAST(m.author_type AS TEXT), CAST(m.type AS TEXT),
              substr(CAST(m.content AS TEXT), 1, ` + fmt.Sprint(readText) + `), ` + meta + `,
              CAST(m.created_at AS TEXT), CAST(m.updated_at AS TEXT), ` + big + `)) FILTER (WHERE ` + interesting + `),
            json_group_array(json_array(CAST(m.id AS TEXT), CAST(m.type AS TEXT), CAST(m.created_at AS TEXT))) FILTER (WHERE ` + user + `),
            CAST(COUNT(*) FILTER (WHERE ` + plain + ` AND ` + ahead + `) AS TEXT),
            CAST(COUNT(*) AS TEXT)` + flag + `)
   FROM task_session_messages m WHERE m.turn_id = c.turn_id)
FROM cur c`
	}
	// One LATERAL row per turn with plain columns: the newest update's
	// instant and type need no JSON around them, and the join costs less
	// than a subquery per turn building one value (measured: see
	// docs/benchmarks.md, appendix).
	kept := plain + ` AND m.updated_at <= $2::timestamp`
	return `SELECT c.n - 1, x.newest, x.newest_type, x.list, x.users, x.ahead, x.total
FROM unnest($1::text[]) WITH ORDINALITY AS c(turn_id, n) CROSS JOIN LATERAL (SELECT
            MAX(m.updated_at) FILTER (WHERE ` + kept + `) AS newest,
            (array_agg(m.type ORDER BY m.updated_at DESC NULLS LAST, m.id DESC) FILTER (WHERE ` + kept + `))[1] AS newest_type,
            COUNT(*) FILTER (WHERE ` + plain + ` AND m.updated_at > $2::timestamp) AS ahead,
            json_agg(json_build_array(m.id, m.author_type, m.type, substr(m.content, 1, ` + fmt.Sprint(readText) + `), ` + meta + `, m.created_at, m.updated_at, ` + big + `))
              FILTER (WHERE ` + interesting + `) AS list,
            json_agg(json_build_array(m.id, m.type, m.created_at)) FILTER (WHERE ` + user + `) AS users,
            COUNT(*) AS total
   FROM task_session_messages m WHERE m.turn_id = c.turn_id) x`
}

// MetaMemberNames names the metadata members read apart when metadata is
// too big to read whole.
func MetaMemberNames() []string {
	var out []string
	for _, m := range metaMembers() {
		out = append(out, m.name)
	}
	return out
}
