package ledger

import (
	"context"
	"database/sql"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// Silence is a runtime silence (`watchdogd silence add`): matching Slack
// actions wait, exactly like a config silence.
type Silence struct {
	ID          string
	WorkspaceID string
	TaskID      string
	SessionID   string
	Kind        model.Kind
	Comment     string
	CreatedBy   string
	CreatedAt   time.Time
	Until       time.Time
	ExpiredAt   time.Time
	// UntilClear: the silence ends when no scan reports its session's
	// finding of its kind, nor its episode, any more (a resolve from
	// Slack); Until only bounds it.
	UntilClear bool
	// Identity, when set, is an episode's (a click's silence): it is
	// covered too, whatever kind it turns to.
	Identity string
}

// Active reports whether the silence mutes at now.
func (s Silence) Active(now time.Time) bool { return s.ExpiredAt.IsZero() && now.Before(s.Until) }

// AddSilence stores a silence. A silence whose id is stored already is
// left as it is: a click's silence is named by the click's key, and the
// click may be delivered again after a crash.
func (s *Store) AddSilence(ctx context.Context, v Silence) error {
	clear := 0
	if v.UntilClear {
		clear = 1
	}
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO silences (id, workspace_id, task_id, session_id, kind, comment, created_by, created_us, until_us, until_clear, identity)
	  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`), v.ID, v.WorkspaceID, v.TaskID, v.SessionID, v.Kind, v.Comment, v.CreatedBy,
		us(v.CreatedAt), us(v.Until), clear, v.Identity)
	return s.wrap("add silence", err)
}

// Silences lists silences active at now (all of them when all is set).
func (s *Store) Silences(ctx context.Context, now time.Time, all bool) ([]Silence, error) {
	q := `SELECT id, workspace_id, task_id, session_id, kind, comment, created_by, created_us, until_us, expired_us, until_clear, identity FROM silences`
	var args []any
	if !all {
		q += ` WHERE expired_us IS NULL AND until_us > ?`
		args = append(args, us(now))
	}
	rows, err := s.db.QueryContext(ctx, s.q(q+" ORDER BY created_us, id"), args...)
	if err != nil {
		return nil, s.wrap("list silences", err)
	}
	var out []Silence
	for rows.Next() {
		var v Silence
		var created, until int64
		var expired sql.NullInt64
		var clear int
		if err := rows.Scan(&v.ID, &v.WorkspaceID, &v.TaskID, &v.SessionID, &v.Kind, &v.Comment, &v.CreatedBy, &created, &until, &expired, &clear, &v.Identity); err != nil {
			_ = rows.Close()
			return nil, s.wrap("list silences", err)
		}
		v.CreatedAt, v.Until, v.ExpiredAt, v.UntilClear = fromUS(created), fromUS(until), fromNullUS(expired), clear != 0
		out = append(out, v)
	}
	return out, s.wrap("list silences", closeRows(rows))
}

// ExpireSilence ends a silence now; false when no active silence has the id.
func (s *Store) ExpireSilence(ctx context.Context, id string, now time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, s.q(`UPDATE silences SET expired_us = ? WHERE id = ? AND expired_us IS NULL`), us(now), id)
	if err != nil {
		return false, s.wrap("expire silence", err)
	}
	n, err := res.RowsAffected()
	return n == 1, s.wrap("expire silence", err)
}

// OpenCounts counts open episodes by kind.
func (s *Store) OpenCounts(ctx context.Context) (map[model.Kind]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT kind, COUNT(*) FROM episodes WHERE resolved_us IS NULL GROUP BY kind`)
	if err != nil {
		return nil, s.wrap("count episodes", err)
	}
	out := map[model.Kind]int{}
	for rows.Next() {
		var k model.Kind
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			_ = rows.Close()
			return nil, s.wrap("count episodes", err)
		}
		out[k] = n
	}
	return out, s.wrap("count episodes", closeRows(rows))
}
