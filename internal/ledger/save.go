package ledger

import (
	"context"
	"database/sql"

	"github.com/watchdogd/watchdogd/internal/model"
)

// requeue puts failed actions back to pending (`watchdogd episodes
// retry`), uncertain: the next attempt looks for each in Slack first,
// since an earlier attempt of it may have landed before it failed. An
// operator's handful: one statement each.
func (s *Store) requeue(ctx context.Context, tx *sql.Tx, keys []string, now int64) error {
	for _, key := range keys {
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE actions SET state = 'pending', uncertain = 1, next_attempt_us = ?, updated_us = ?
		  WHERE key = ? AND state = 'failed'`), now, now, key); err != nil {
			return s.wrap("requeue action", err)
		}
	}
	return nil
}

// actionRecord is an action as saveActions' JSON parameter spells it.
type actionRecord struct {
	Key       string           `json:"key"`
	EpisodeID string           `json:"episode_id"`
	Seq       string           `json:"seq"`
	Step      int              `json:"step"`
	Repeat    int              `json:"repeat_no"`
	Kind      model.ActionKind `json:"action"`
	Channel   string           `json:"channel"`
	Mention   string           `json:"mention"`
	ParentKey string           `json:"parent_key"`
	Digest    string           `json:"digest"`
	Body      string           `json:"body"`
	Created   int64            `json:"created_us"`
	Next      int64            `json:"next_attempt_us"`
}

// saveActions inserts each decided action before any delivery. A key
// already stored is the same step decided again: nothing new, or a
// conflict when its digest differs.
func (s *Store) saveActions(ctx context.Context, tx *sql.Tx, actions []model.Action) (model.Applied, error) {
	if s.pg {
		return s.saveActionsBatched(ctx, tx, actions)
	}
	var out model.Applied
	if len(actions) == 0 {
		return out, nil
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO actions (key, episode_id, seq, step, repeat_no, action, channel, mention, parent_key, digest, body, state,
	  created_us, updated_us, next_attempt_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?) ON CONFLICT (key) DO NOTHING`)
	if err != nil {
		return out, s.wrap("save action", err)
	}
	defer func() { _ = stmt.Close() }()
	for _, a := range actions {
		res, err := stmt.ExecContext(ctx, a.Key, a.EpisodeID, a.Seq, a.Step, a.Repeat, a.Kind, a.Channel, a.Mention, a.ParentKey, a.Digest, a.Body,
			us(a.CreatedAt), us(a.CreatedAt), us(a.NextAttempt))
		if err != nil {
			return out, s.wrap("save action", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return out, s.wrap("save action", err)
		}
		if err := s.inserted(ctx, tx, &out, a, n == 1); err != nil {
			return out, err
		}
	}
	return out, nil
}

// saveActionsBatched is saveActions on PostgreSQL: a statement per batch,
// which returns the keys it inserted; the others are checked for a
// conflict as one at a time (a config change under decided steps: rare).
func (s *Store) saveActionsBatched(ctx context.Context, tx *sql.Tx, actions []model.Action) (model.Applied, error) {
	var out model.Applied
	for _, batch := range chunks(actions, func(a model.Action) int { return len(a.Body) }) {
		recs := make([]actionRecord, len(batch))
		for i, a := range batch {
			recs[i] = actionRecord{Key: a.Key, EpisodeID: a.EpisodeID, Seq: a.Seq, Step: a.Step, Repeat: a.Repeat, Kind: a.Kind,
				Channel: a.Channel, Mention: a.Mention, ParentKey: a.ParentKey, Digest: a.Digest, Body: a.Body,
				Created: us(a.CreatedAt), Next: us(a.NextAttempt)}
		}
		arg, err := s.jsonArg("save actions", recs)
		if err != nil {
			return out, err
		}
		rows, err := tx.QueryContext(ctx, `INSERT INTO actions (key, episode_id, seq, step, repeat_no, action, channel, mention, parent_key, digest, body, state,
		    created_us, updated_us, next_attempt_us)
		  SELECT key, episode_id, seq, step, repeat_no, action, channel, mention, parent_key, digest, body, 'pending',
		    created_us, created_us, next_attempt_us
		  FROM json_to_recordset($1::json) AS v(key text, episode_id text, seq text, step integer, repeat_no integer, action text,
		    channel text, mention text, parent_key text, digest text, body text, created_us bigint, next_attempt_us bigint)
		  ON CONFLICT (key) DO NOTHING
		  RETURNING key`, arg)
		if err != nil {
			return out, s.wrap("save actions", err)
		}
		fresh := map[string]bool{}
		for rows.Next() {
			var key string
			if err := rows.Scan(&key); err != nil {
				_ = rows.Close()
				return out, s.wrap("save actions", err)
			}
			fresh[key] = true
		}
		if err := closeRows(rows); err != nil {
			return out, s.wrap("save actions", err)
		}
		for _, a := range batch {
			// A key twice in one plan is inserted once; its second
			// decision is compared with the first, as one at a time.
			isNew := fresh[a.Key]
			delete(fresh, a.Key)
			if err := s.inserted(ctx, tx, &out, a, isNew); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// inserted counts an action that was saved, or checks a key already
// stored for a conflict.
func (s *Store) inserted(ctx context.Context, tx *sql.Tx, out *model.Applied, a model.Action, isNew bool) error {
	if isNew {
		out.Inserted++
		return nil
	}
	c, err := s.checkConflict(ctx, tx, a)
	if err != nil {
		return err
	}
	if c != nil {
		out.Conflicts = append(out.Conflicts, *c)
	}
	return nil
}

// checkConflict compares a re-decided action's digest with the stored one.
// A difference is counted once per distinct digest; the stored action stays
// authoritative and is delivered as first decided.
func (s *Store) checkConflict(ctx context.Context, tx *sql.Tx, a model.Action) (*model.Conflict, error) {
	var stored, last string
	if err := tx.QueryRowContext(ctx, s.q("SELECT digest, conflict_digest FROM actions WHERE key = ?"), a.Key).Scan(&stored, &last); err != nil {
		return nil, s.wrap("read action", err)
	}
	if stored == a.Digest || last == a.Digest {
		return nil, nil
	}
	if _, err := tx.ExecContext(ctx, s.q("UPDATE actions SET conflicts = conflicts + 1, conflict_digest = ? WHERE key = ?"), a.Digest, a.Key); err != nil {
		return nil, s.wrap("record conflict", err)
	}
	return &model.Conflict{Key: a.Key, Stored: stored, Want: a.Digest}, nil
}
