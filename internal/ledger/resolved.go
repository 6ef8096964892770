package ledger

import (
	"context"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// Resolved is one resolve as watchdogd_episode_duration_seconds counts
// it: the episode's kind (the kind it resolved as: a question that turned
// from unanswered to shadowed is the kind it was last), why it cleared,
// and how long it had held, from its since.
type Resolved struct {
	// Seq is the resolve's number, in the order resolves committed.
	Seq     int64
	Kind    model.Kind
	Cleared model.Cleared
	Since   time.Time
	At      time.Time
}

// Seconds is how long the episode held, from its since to its resolve;
// never below zero.
func (r Resolved) Seconds() float64 { return max(0, r.At.Sub(r.Since).Seconds()) }

// TakeResolved returns the resolves committed after the ledger's counter
// 'observed', oldest first and at most limit, and moves the counter past
// them in the same transaction. Whoever takes a resolve is the one to
// count it: resolves are numbered in the order they commit (see
// resolveEpisodes), and the counter's row is held from the first
// statement to the commit, so two takers (two replicas, one taking over
// from the other) never take the same one, and a resolve made by another
// process (`watchdogd episodes resolve`) is taken by the next take after
// it committed, never skipped. The caller counts what it got only once this
// returned: a take that failed moved nothing. A commit whose outcome the
// connection lost is read back by holder (a name unique to the process).
func (s *Store) TakeResolved(ctx context.Context, holder string, limit int) ([]Resolved, error) {
	tx, err := s.begin(ctx)
	if err != nil {
		return nil, s.wrap("take resolves", err)
	}
	defer func() { _ = tx.Rollback() }()
	var from int64
	if err := tx.QueryRowContext(ctx, s.q(`UPDATE episode_counters SET holder = ? WHERE name = 'observed' RETURNING value`), holder).Scan(&from); err != nil {
		return nil, s.wrap("take resolves: read the counter", err)
	}
	rows, err := tx.QueryContext(ctx, s.q(`SELECT resolved_seq, kind, cleared, since_us, resolved_us FROM episodes
	  WHERE resolved_seq > ? ORDER BY resolved_seq LIMIT ?`), from, limit)
	if err != nil {
		return nil, s.wrap("take resolves", err)
	}
	var out []Resolved
	for rows.Next() {
		var r Resolved
		var since, at int64
		if err := rows.Scan(&r.Seq, &r.Kind, &r.Cleared, &since, &at); err != nil {
			_ = rows.Close()
			return nil, s.wrap("take resolves", err)
		}
		r.Since, r.At = fromUS(since), fromUS(at)
		out = append(out, r)
	}
	if err := closeRows(rows); err != nil {
		return nil, s.wrap("take resolves", err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	to := out[len(out)-1].Seq
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE episode_counters SET value = ? WHERE name = 'observed'`), to); err != nil {
		return nil, s.wrap("take resolves: move the counter", err)
	}
	if err := tx.Commit(); err != nil {
		if s.tookThem(holder, to) {
			return out, nil
		}
		return nil, s.wrap("take resolves: commit", err)
	}
	return out, nil
}

// tookThem says whether a take whose commit failed landed: the counter
// stands where it moved it, in its holder's name. The read has its own
// context: the take's may be what ended the commit.
func (s *Store) tookThem(holder string, to int64) bool {
	ctx, cancel := context.WithTimeout(context.Background(), readBackTimeout)
	defer cancel()
	var value int64
	var by string
	err := s.db.QueryRowContext(ctx, `SELECT value, holder FROM episode_counters WHERE name = 'observed'`).Scan(&value, &by)
	return err == nil && value == to && by == holder
}

// readBackTimeout bounds the read of a take whose commit failed.
const readBackTimeout = 5 * time.Second
