package kandevsql

import "github.com/watchdogd/watchdogd/internal/authority"

// SessionTurnsOf reads every turn of the sessions whose ids are its
// parameter (a JSON array on SQLite, a text[] on PostgreSQL), for the Go
// rule: each row is the session's position in the ids (from 0), the turn's
// id, started_at, created_at, completed_at, updated_at and metadata as
// text, and how many messages it holds, counted to two (a boot turn holds
// one). The snapshot runs it only for sessions whose current turn is a
// boot turn, to find their newest turn that is not one. Nothing is cast to
// JSON, so no value fails it.
func SessionTurnsOf(d authority.Dialect) string {
	count := `(SELECT COUNT(*) FROM (SELECT 1 FROM task_session_messages m WHERE m.turn_id = tu.id LIMIT 2) x)`
	if d == authority.SQLite {
		return `WITH s(n, session_id) AS (SELECT key, value FROM json_each(?1))
SELECT s.n, CAST(tu.id AS TEXT), CAST(tu.started_at AS TEXT), CAST(tu.created_at AS TEXT), CAST(tu.completed_at AS TEXT),
       CAST(tu.updated_at AS TEXT), CAST(tu.metadata AS TEXT), ` + count + `
FROM s JOIN task_session_turns tu ON tu.task_session_id = s.session_id`
	}
	return `SELECT s.n - 1, tu.id, tu.started_at, tu.created_at, tu.completed_at, tu.updated_at, tu.metadata, ` + count + `
FROM unnest($1::text[]) WITH ORDINALITY AS s(session_id, n) JOIN task_session_turns tu ON tu.task_session_id = s.session_id`
}

// Replies reads, for the turns whose ids are its first parameter, the
// newest creation among their plain agent rows that are no question or
// permission (whether the agent replied after a restart abandoned the
// turn), not after the limit that is its second parameter: each row is
// the turn's position (from 0) and that creation as stored. On SQLite, in
// one pass over each turn's rows, one JSON array: the newest by instant
// (julianday), its text returned through the bare-column rule, and the
// creations julianday cannot read, for Go to weigh.
func Replies(d authority.Dialect) string {
	reply := `m.turn_id = c.turn_id AND m.author_type = 'agent' AND m.type NOT IN ('status', 'script_execution', 'clarification_request', 'permission_request')`
	if d == authority.SQLite {
		newest := `MAX(CASE WHEN NOT COALESCE(julianday(m.created_at) > julianday(?2), 0) THEN julianday(m.created_at) END)`
		return `WITH cur(n, turn_id) AS (SELECT key, value FROM json_each(?1))
SELECT c.n,
  (SELECT json_array(CASE WHEN ` + newest + ` IS NOT NULL THEN CAST(m.created_at AS TEXT) END,
            json_group_array(CAST(m.created_at AS TEXT)) FILTER (WHERE julianday(m.created_at) IS NULL AND m.created_at IS NOT NULL))
   FROM task_session_messages m WHERE ` + reply + `)
FROM cur c`
	}
	return `SELECT c.n - 1, (SELECT MAX(m.created_at) FROM task_session_messages m WHERE ` + reply + ` AND m.created_at <= $2::timestamp)
FROM unnest($1::text[]) WITH ORDINALITY AS c(turn_id, n)`
}

// TraceSessions reads, for the sessions whose ids are its parameter, each
// one's state and whether its task is archived: why an episode's session
// left the active ones.
func TraceSessions(d authority.Dialect) string {
	if d == authority.SQLite {
		return `SELECT CAST(s.id AS TEXT), CAST(s.state AS TEXT), t.archived_at IS NOT NULL
FROM task_sessions s LEFT JOIN tasks t ON t.id = s.task_id
WHERE s.id IN (SELECT value FROM json_each(?1))`
	}
	return `SELECT s.id, s.state, t.archived_at IS NOT NULL
FROM task_sessions s LEFT JOIN tasks t ON t.id = s.task_id
WHERE s.id = ANY($1::text[])`
}

// TraceTurns reads the rows of the turns whose ids are its parameter: id,
// started_at, completed_at, updated_at, as text on SQLite.
func TraceTurns(d authority.Dialect) string {
	if d == authority.SQLite {
		return `SELECT CAST(tu.id AS TEXT), CAST(tu.started_at AS TEXT), CAST(tu.completed_at AS TEXT), CAST(tu.updated_at AS TEXT)
FROM task_session_turns tu WHERE tu.id IN (SELECT value FROM json_each(?1))`
	}
	return `SELECT tu.id, tu.started_at, tu.completed_at, tu.updated_at FROM task_session_turns tu WHERE tu.id = ANY($1::text[])`
}
