package kandev

import (
	"fmt"

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
	return fmt.Sprintf(`active AS (
  SELECT s.id AS session_id, s.task_id, s.state, CAST(s.is_primary AS INTEGER) <> 0 AS is_primary,
         %s AS session_started_at, t.title, t.workspace_id, t.metadata AS task_metadata
  FROM task_sessions s JOIN tasks t ON t.id = s.task_id
  WHERE s.state IN %s AND t.archived_at IS NULL%s
)`, started, activeStates, filter)
}

// queuedJoin counts queued_messages per session in one pass over that small
// table; old kandev databases have none.
func queuedJoin(hasQueued bool) (join, col string) {
	if !hasQueued {
		return "", "0"
	}
	return "LEFT JOIN (SELECT session_id, COUNT(*) AS n FROM queued_messages GROUP BY session_id) q ON q.session_id = r.session_id", "COALESCE(q.n, 0)"
}

// ts selects a timestamp column: as text on SQLite (modernc would otherwise
// turn declared TIMESTAMP columns into time.Time, rewriting the text and
// failing the scan on one unparseable value), natively on PostgreSQL.
func ts(d authority.Dialect, col string) string {
	if d == authority.SQLite {
		return "CAST(" + col + " AS TEXT)"
	}
	return col
}

// sessionsQuery is the fast path: every active session with its current turn,
// kandev's-view turn, open-turn count and second-oldest open turn, resolved in
// SQL by the authority fragments, one correlated probe per active session
// inside one statement.
func sessionsQuery(d authority.Dialect, hasQueued, oneTask bool) string {
	pred, order := authority.Fragments(d, "tu")
	kpred, korder := authority.KandevFragments(d, "tu")
	open := authority.OpenFragment(d, "tu")
	oldest := authority.OldestFirst(d, "tu")
	malformed := "NULL"
	if d == authority.SQLite {
		// PostgreSQL needs no count: a malformed turn fails the ::jsonb cast
		// and sends the snapshot down the fallback path, which counts in Go.
		malformed = `(SELECT group_concat(tu.id, char(31)) FROM task_session_turns tu
       WHERE tu.task_session_id = a.session_id AND tu.metadata IS NOT NULL AND NOT json_valid(tu.metadata))`
	}
	qjoin, qcol := queuedJoin(hasQueued)
	return fmt.Sprintf(`WITH %[1]s,
resolved AS (
  SELECT a.*,
    (SELECT tu.id FROM task_session_turns tu WHERE tu.task_session_id = a.session_id AND %[2]s ORDER BY %[3]s LIMIT 1) AS current_id,
    (SELECT tu.id FROM task_session_turns tu WHERE tu.task_session_id = a.session_id AND %[4]s ORDER BY %[5]s LIMIT 1) AS kandev_id,
    (SELECT COUNT(*) FROM task_session_turns tu WHERE tu.task_session_id = a.session_id AND %[6]s) AS open_turns,
    (SELECT %[7]s FROM task_session_turns tu WHERE tu.task_session_id = a.session_id AND %[6]s ORDER BY %[8]s LIMIT 1 OFFSET 1) AS second_open,
    %[9]s AS malformed_turns
  FROM active a
)
SELECT r.session_id, r.task_id, r.state, r.is_primary, r.session_started_at, r.title, r.workspace_id, r.task_metadata,
       %[10]s AS queued, r.current_id, %[11]s, %[12]s, r.kandev_id, r.open_turns, r.second_open, r.malformed_turns
FROM resolved r
LEFT JOIN task_session_turns ct ON ct.id = r.current_id
%[13]s
ORDER BY r.session_id`,
		activeCTE(d, oneTask), pred, order, kpred, korder, open, ts(d, "tu.started_at"), oldest, malformed,
		qcol, ts(d, "ct.started_at"), ts(d, "ct.completed_at"), qjoin)
}

// sessionTurnsQuery is PostgreSQL's fallback after a malformed metadata value
// failed the fast statement: the same selection, with every turn of every
// active session and its metadata as raw text, resolved by the Go rule.
func sessionTurnsQuery(d authority.Dialect, hasQueued, oneTask bool) string {
	qjoin, qcol := queuedJoin(hasQueued)
	return fmt.Sprintf(`WITH %[1]s
SELECT r.session_id, r.task_id, r.state, r.is_primary, r.session_started_at, r.title, r.workspace_id, r.task_metadata,
       %[2]s AS queued, tu.id, %[3]s, %[4]s, %[5]s, tu.metadata,
       EXISTS (SELECT 1 FROM task_session_messages m WHERE m.turn_id = tu.id)
FROM active r
LEFT JOIN task_session_turns tu ON tu.task_session_id = r.session_id
%[6]s
ORDER BY r.session_id`,
		activeCTE(d, oneTask), qcol, ts(d, "tu.started_at"), ts(d, "tu.created_at"), ts(d, "tu.completed_at"), qjoin)
}

// messagesQuery reads what the rules need from the current turns' messages,
// given their ids: the newest plain agent update per turn (an aggregate, so
// the rows read grow with the turn, the rows returned do not), each agent
// status and script_execution row (the stall notice and boot script are told
// apart by metadata, read in Go), and every clarification and permission
// request. Content is capped: it only feeds a Slack section, itself capped.
func messagesQuery(d authority.Dialect) string {
	if d == authority.SQLite {
		// The newest row's updated_at and type travel as one value
		// (updated_at, char(31), type): one probe per turn, not two.
		return `WITH cur(turn_id) AS (SELECT value FROM json_each(?1))
SELECT c.turn_id, '', 'agent', '', '', NULL, NULL,
       (SELECT CAST(m.updated_at AS TEXT) || char(31) || m.type FROM task_session_messages m
        WHERE m.turn_id = c.turn_id AND m.author_type = 'agent' AND m.type NOT IN ('status', 'script_execution')
        ORDER BY julianday(m.updated_at) DESC, m.updated_at DESC LIMIT 1)
FROM cur c
UNION ALL
SELECT m.turn_id, m.id, m.author_type, m.type, substr(m.content, 1, 8192), m.metadata, CAST(m.created_at AS TEXT), CAST(m.updated_at AS TEXT)
FROM task_session_messages m
WHERE m.turn_id IN (SELECT turn_id FROM cur)
  AND ((m.author_type = 'agent' AND m.type IN ('status', 'script_execution')) OR m.type IN ('clarification_request', 'permission_request'))`
	}
	return `(SELECT DISTINCT ON (m.turn_id) m.turn_id, '', 'agent', m.type, '', NULL, NULL, m.updated_at
FROM task_session_messages m
WHERE m.turn_id = ANY ($1) AND m.author_type = 'agent' AND m.type NOT IN ('status', 'script_execution')
ORDER BY m.turn_id, m.updated_at DESC NULLS LAST, m.id DESC)
UNION ALL
SELECT m.turn_id, m.id, m.author_type, m.type, substr(m.content, 1, 8192), m.metadata, m.created_at, m.updated_at
FROM task_session_messages m
WHERE m.turn_id = ANY ($1)
  AND ((m.author_type = 'agent' AND m.type IN ('status', 'script_execution')) OR m.type IN ('clarification_request', 'permission_request'))`
}

// Statements returns the snapshot's statements for a dialect, for EXPLAIN
// in benchmarks and docs: the sessions statement and the current-turn
// messages statement (which takes the current turn ids as its parameter).
func Statements(d authority.Dialect, hasQueued bool) (sessions, messages string) {
	return sessionsQuery(d, hasQueued, false), messagesQuery(d)
}
