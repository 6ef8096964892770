package ledger

import (
	"context"
	"database/sql"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// Silence is a runtime silence (`watchdogd silence add`, a Slack click's
// snooze or resolve): matching Slack actions wait, exactly like a config
// silence.
type Silence struct {
	ID string
	// Matchers are Alertmanager's; every one must hold.
	Matchers  model.Matchers
	Comment   string
	CreatedBy string
	CreatedAt time.Time
	Until     time.Time
	ExpiredAt time.Time
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

// AddSilence stores a silence with its matchers, in one transaction. A
// silence whose id is stored already is left as it is: a click's silence
// is named by the click's key, and the click may be delivered again after
// a crash.
func (s *Store) AddSilence(ctx context.Context, v Silence) error {
	clear := 0
	if v.UntilClear {
		clear = 1
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return s.wrap("add silence", err)
	}
	defer func() { _ = tx.Rollback() }()
	res, err := tx.ExecContext(ctx, s.q(`INSERT INTO silences (id, comment, created_by, created_us, until_us, until_clear, identity)
	  VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`), v.ID, v.Comment, v.CreatedBy, us(v.CreatedAt), us(v.Until), clear, v.Identity)
	if err != nil {
		return s.wrap("add silence", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return s.wrap("add silence", err) // stored already: its matchers too
	}
	for i, m := range v.Matchers {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO silence_matchers (silence_id, position, name, op, value) VALUES (?, ?, ?, ?, ?)`),
			v.ID, i, m.Name, string(m.Op), m.Value); err != nil {
			return s.wrap("add silence", err)
		}
	}
	return s.wrap("add silence", tx.Commit())
}

// Silences lists silences active at now (all of them when all is set),
// oldest first, each with its matchers.
func (s *Store) Silences(ctx context.Context, now time.Time, all bool) ([]Silence, error) {
	q := `SELECT s.id, s.comment, s.created_by, s.created_us, s.until_us, s.expired_us, s.until_clear, s.identity, m.name, m.op, m.value
	  FROM silences s LEFT JOIN silence_matchers m ON m.silence_id = s.id`
	var args []any
	if !all {
		q += ` WHERE s.expired_us IS NULL AND s.until_us > ?`
		args = append(args, us(now))
	}
	rows, err := s.db.QueryContext(ctx, s.q(q+" ORDER BY s.created_us, s.id, m.position"), args...)
	if err != nil {
		return nil, s.wrap("list silences", err)
	}
	var out []Silence
	for rows.Next() {
		var v Silence
		var created, until int64
		var expired sql.NullInt64
		var clear int
		var name, op, value sql.NullString
		if err := rows.Scan(&v.ID, &v.Comment, &v.CreatedBy, &created, &until, &expired, &clear, &v.Identity, &name, &op, &value); err != nil {
			_ = rows.Close()
			return nil, s.wrap("list silences", err)
		}
		if n := len(out); n == 0 || out[n-1].ID != v.ID {
			v.CreatedAt, v.Until, v.ExpiredAt, v.UntilClear = fromUS(created), fromUS(until), fromNullUS(expired), clear != 0
			out = append(out, v)
		}
		if name.Valid {
			last := &out[len(out)-1]
			last.Matchers = append(last.Matchers, storedMatcher(name.String, model.MatchOp(op.String), value.String))
		}
	}
	return out, s.wrap("list silences", closeRows(rows))
}

// storedMatcher is a matcher as the ledger holds it, checked again (a
// regex compiled once here, not at every match). One this build cannot
// read (written by hand) is kept as it is: it then matches nothing, and
// silence list still shows it.
func storedMatcher(name string, op model.MatchOp, value string) model.Matcher {
	m, err := model.NewMatcher(name, op, value)
	if err != nil {
		return model.Matcher{Name: name, Op: op, Value: value}
	}
	return m
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
