package ledger

import (
	"context"
	"database/sql"

	"github.com/watchdogd/watchdogd/internal/model"
)

// refreshRow is one refresh as the statement's JSON parameter spells it.
type refreshRow struct {
	ID          string     `json:"id"`
	Kind        model.Kind `json:"kind"`
	KindChanges int        `json:"kind_changes"`
	TaskTitle   string     `json:"task_title"`
	LastSeen    int64      `json:"last_seen_us"`
	Finding     string     `json:"finding"`
}

// refresh updates every episode the scan still reports. Every open episode
// is refreshed on every cycle, so on PostgreSQL this runs one statement per
// batch of episodes rather than one per episode: across a network, 2,000
// open episodes would otherwise cost 2,000 round trips inside the
// decision's transaction (and its lock) every cycle. SQLite has no round
// trip to save, and its UPDATE … FROM json_each joins the wrong way round
// (every episode against every row of the parameter), so there one prepared
// statement runs per episode.
func (s *Store) refresh(ctx context.Context, tx *sql.Tx, rs []model.Refresh) error {
	if len(rs) == 0 {
		return nil
	}
	if !s.pg {
		return s.refreshEach(ctx, tx, rs)
	}
	for _, batch := range chunks(rs, func(r model.Refresh) int { return len(r.Finding) + len(r.TaskTitle) }) {
		rows := make([]refreshRow, len(batch))
		for i, r := range batch {
			rows[i] = refreshRow{ID: r.ID, Kind: r.Kind, KindChanges: r.KindChanges, TaskTitle: r.TaskTitle, LastSeen: us(r.LastSeen), Finding: r.Finding}
		}
		arg, err := s.jsonArg("refresh episodes", rows)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE episodes SET kind = v.kind, kind_changes = v.kind_changes, task_title = v.task_title,
	    last_seen_us = v.last_seen_us, missing_since_us = NULL, finding = v.finding
	  FROM json_to_recordset($1::json) AS v(id text, kind text, kind_changes integer, task_title text, last_seen_us bigint, finding text)
	  WHERE episodes.id = v.id AND episodes.resolved_us IS NULL`, arg); err != nil {
			return s.wrap("refresh episodes", err)
		}
	}
	return nil
}

func (s *Store) refreshEach(ctx context.Context, tx *sql.Tx, rs []model.Refresh) error {
	return s.eachRow(ctx, tx, "refresh episode", len(rs), `UPDATE episodes SET kind = ?, kind_changes = ?, task_title = ?, last_seen_us = ?, missing_since_us = NULL, finding = ?
	  WHERE id = ? AND resolved_us IS NULL`, func(i int) []any {
		r := rs[i]
		return []any{r.Kind, r.KindChanges, r.TaskTitle, us(r.LastSeen), r.Finding, r.ID}
	})
}
