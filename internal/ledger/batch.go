package ledger

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/watchdogd/watchdogd/internal/model"
)

// A decision's writes reach PostgreSQL in batches: one statement per batch
// of rows rather than one per row. A storm opens thousands of episodes in
// one decision and resolves them in one when it clears, and each statement
// is a round trip inside the decision's transaction (and its lock). Per
// row, a storm across a network of a few milliseconds outlasts
// cycle_timeout: the decision rolls back, so does the next one, and nobody
// is paged. Batched, a decision runs a few statements however many rows it
// writes (BenchmarkStorm; measured: see the appendix of docs/benchmarks.md). SQLite
// has no round trip to save; there one prepared statement runs per row.
//
// A batch carries at most batchRows rows and, past its first row,
// batchBytes of their text (a finding holds the questions it shows, an
// action its frozen message, tens of kilobytes for a long one), so its
// parameter stays small whatever the decision holds.
const (
	batchRows  = 1000
	batchBytes = 1 << 20
)

// chunks splits items into the batches one statement each carries; size
// is an item's text in bytes.
func chunks[T any](items []T, size func(T) int) [][]T {
	var out [][]T
	for len(items) > 0 {
		n, bytes := 0, 0
		for n < len(items) && n < batchRows && (n == 0 || bytes < batchBytes) {
			bytes += size(items[n])
			n++
		}
		out = append(out, items[:n])
		items = items[n:]
	}
	return out
}

// jsonArg is rows as the JSON text parameter json_to_recordset reads on
// the server.
func (s *Store) jsonArg(what string, rows any) (string, error) {
	b, err := json.Marshal(rows)
	return string(b), s.wrap(what, err)
}

// episodeRecord is an episode as openEpisodes' JSON parameter spells it.
type episodeRecord struct {
	ID          string     `json:"id"`
	Identity    string     `json:"identity"`
	Kind        model.Kind `json:"kind"`
	SessionID   string     `json:"session_id"`
	TaskID      string     `json:"task_id"`
	WorkspaceID string     `json:"workspace_id"`
	TurnID      string     `json:"turn_id"`
	PendingID   string     `json:"pending_id"`
	TaskTitle   string     `json:"task_title"`
	Since       int64      `json:"since_us"`
	Opened      int64      `json:"opened_us"`
	LastSeen    int64      `json:"last_seen_us"`
	KindChanges int        `json:"kind_changes"`
	Finding     string     `json:"finding"`
}

// openEpisodes inserts the episodes a decision opens.
func (s *Store) openEpisodes(ctx context.Context, tx *sql.Tx, es []model.Episode) error {
	if !s.pg {
		return s.eachRow(ctx, tx, "open episode", len(es), `INSERT INTO episodes (`+episodeCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			func(i int) []any {
				e := es[i]
				return []any{e.ID, e.Identity, e.Kind, e.SessionID, e.TaskID, e.WorkspaceID, e.TurnID, e.PendingID, e.TaskTitle,
					us(e.Since), us(e.OpenedAt), us(e.LastSeen), nil, nil, "", e.KindChanges, e.Finding, ""}
			})
	}
	for _, batch := range chunks(es, func(e model.Episode) int { return len(e.Finding) + len(e.TaskTitle) }) {
		recs := make([]episodeRecord, len(batch))
		for i, e := range batch {
			recs[i] = episodeRecord{ID: e.ID, Identity: e.Identity, Kind: e.Kind, SessionID: e.SessionID, TaskID: e.TaskID,
				WorkspaceID: e.WorkspaceID, TurnID: e.TurnID, PendingID: e.PendingID, TaskTitle: e.TaskTitle,
				Since: us(e.Since), Opened: us(e.OpenedAt), LastSeen: us(e.LastSeen), KindChanges: e.KindChanges, Finding: e.Finding}
		}
		arg, err := s.jsonArg("open episodes", recs)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO episodes (`+episodeCols+`)
		  SELECT id, identity, kind, session_id, task_id, workspace_id, turn_id, pending_id, task_title,
		    since_us, opened_us, last_seen_us, NULL, NULL, '', kind_changes, finding, ''
		  FROM json_to_recordset($1::json) AS v(id text, identity text, kind text, session_id text, task_id text,
		    workspace_id text, turn_id text, pending_id text, task_title text, since_us bigint, opened_us bigint,
		    last_seen_us bigint, kind_changes integer, finding text)`, arg); err != nil {
			return s.wrap("open episodes", err)
		}
	}
	return nil
}

// markMissing records when each episode was first not reported.
func (s *Store) markMissing(ctx context.Context, tx *sql.Tx, ms []model.Missing) error {
	ids, since := make([]string, len(ms)), make([]int64, len(ms))
	for i, m := range ms {
		ids[i], since[i] = m.ID, us(m.Since)
	}
	return s.eachOrArrays(ctx, tx, "mark episode missing", len(ms),
		`UPDATE episodes SET missing_since_us = ? WHERE id = ? AND resolved_us IS NULL AND missing_since_us IS NULL`,
		func(i int) []any { return []any{since[i], ids[i]} },
		`UPDATE episodes SET missing_since_us = v.since_us FROM unnest($1::text[], $2::bigint[]) AS v(id, since_us)
		  WHERE episodes.id = v.id AND episodes.resolved_us IS NULL AND episodes.missing_since_us IS NULL`, ids, since)
}

// resolveEpisodes closes the episodes a decision resolves, each with its
// reason's words and code and the next number of the counter 'resolved'
// (see TakeResolved). The counter's row is taken first: the decision holds
// it until it commits, so numbers are handed out in the order resolves
// commit, on either database.
func (s *Store) resolveEpisodes(ctx context.Context, tx *sql.Tx, rs []model.Resolve) error {
	if len(rs) == 0 {
		return nil
	}
	var last int64
	if err := tx.QueryRowContext(ctx, s.q(`UPDATE episode_counters SET value = value + ? WHERE name = 'resolved' RETURNING value`), len(rs)).Scan(&last); err != nil {
		return s.wrap("number resolves", err)
	}
	ids, at, reasons, codes, seqs := make([]string, len(rs)), make([]int64, len(rs)), make([]string, len(rs)), make([]string, len(rs)), make([]int64, len(rs))
	for i, r := range rs {
		ids[i], at[i], reasons[i], codes[i], seqs[i] = r.ID, us(r.At), r.Reason.Words(), string(r.Reason.Code), last-int64(len(rs)-1-i)
	}
	return s.eachOrArrays(ctx, tx, "resolve episode", len(rs),
		`UPDATE episodes SET resolved_us = ?, resolution = ?, cleared = ?, resolved_seq = ? WHERE id = ? AND resolved_us IS NULL`,
		func(i int) []any { return []any{at[i], reasons[i], codes[i], seqs[i], ids[i]} },
		`UPDATE episodes SET resolved_us = v.at_us, resolution = v.reason, cleared = v.code, resolved_seq = v.seq
		  FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[]) AS v(id, at_us, reason, code, seq)
		  WHERE episodes.id = v.id AND episodes.resolved_us IS NULL`, ids, at, reasons, codes, seqs)
}

// supersede retires pending actions that will never go out.
func (s *Store) supersede(ctx context.Context, tx *sql.Tx, keys []string, now int64) error {
	return s.eachOrArrays(ctx, tx, "supersede action", len(keys),
		`UPDATE actions SET state = 'superseded', updated_us = ? WHERE key = ? AND state = 'pending'`,
		func(i int) []any { return []any{now, keys[i]} },
		`UPDATE actions SET state = 'superseded', updated_us = $2 WHERE key = ANY($1::text[]) AND state = 'pending'`, keys, now)
}

// eachOrArrays runs one statement per row on SQLite (each's ? placeholders,
// row(i) its arguments) and one statement for all n rows on PostgreSQL,
// whose arguments are arrays (unnest): a few kilobytes per thousand rows,
// with no text of any size, so they need no batching.
func (s *Store) eachOrArrays(ctx context.Context, tx *sql.Tx, what string, n int, each string, row func(int) []any, all string, args ...any) error {
	if n == 0 || !s.pg {
		return s.eachRow(ctx, tx, what, n, each, row)
	}
	_, err := tx.ExecContext(ctx, all, args...)
	return s.wrap(what, err)
}

// eachRow runs query, prepared once, for each of n rows with row(i) as its
// arguments: SQLite's way, where a statement costs no round trip.
func (s *Store) eachRow(ctx context.Context, tx *sql.Tx, what string, n int, query string, row func(int) []any) error {
	if n == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, query)
	if err != nil {
		return s.wrap(what, err)
	}
	defer func() { _ = stmt.Close() }()
	for i := range n {
		if _, err := stmt.ExecContext(ctx, row(i)...); err != nil {
			return s.wrap(what, err)
		}
	}
	return nil
}
