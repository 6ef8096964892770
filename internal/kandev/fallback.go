package kandev

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/kandevsql"
	"github.com/watchdogd/watchdogd/internal/model"
)

// readSessions runs the fast statement; on PostgreSQL it runs under a
// savepoint and, when a metadata value fails the ::jsonb cast (any SQLSTATE of
// class 22, or 54001 for JSON nested past the server's stack), rolls back to
// it and reads the same selection with metadata as text for the Go rule.
// Same snapshot, still a fixed number of statements.
func (r *Reader) readSessions(ctx context.Context, tx *sql.Tx, snap *model.Snapshot, args []any) ([]model.Session, error) {
	if r.dialect == authority.SQLite {
		return r.fastSessions(ctx, tx, snap, args)
	}
	if err := r.exec(ctx, tx, snap, "SAVEPOINT watchdogd_fast"); err != nil {
		return nil, r.wrap("savepoint", err)
	}
	sessions, err := r.fastSessions(ctx, tx, snap, args)
	if err == nil {
		if err := r.exec(ctx, tx, snap, "RELEASE SAVEPOINT watchdogd_fast"); err != nil {
			return nil, r.wrap("release savepoint", err)
		}
		return sessions, nil
	}
	if !castFailed(err) {
		return nil, err
	}
	if err := r.exec(ctx, tx, snap, "ROLLBACK TO SAVEPOINT watchdogd_fast"); err != nil {
		return nil, r.wrap("rollback to savepoint", err)
	}
	snap.Fallback = true
	return r.fallbackSessions(ctx, tx, snap, args)
}

// castFailed reports whether err is PostgreSQL refusing a value as JSON:
// any SQLSTATE of class 22 (data exception), or 54001 for JSON nested past
// the server's stack.
func castFailed(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (strings.HasPrefix(pgErr.Code, "22") || pgErr.Code == "54001")
}

func (r *Reader) fallbackSessions(ctx context.Context, tx *sql.Tx, snap *model.Snapshot, args []any) ([]model.Session, error) {
	rows, err := r.query(ctx, tx, snap, kandevsql.SessionTurns(r.dialect, r.hasQueued, len(args) > 0), args...)
	if err != nil {
		return nil, r.wrap("read sessions (metadata as text)", err)
	}
	defer func() { _ = rows.Close() }()
	out := r.sessionsSlice(args)
	var turns []authority.Turn
	var starts, ends, updates []stamp
	flush := func() {
		if len(out) == 0 {
			return
		}
		r.resolveInGo(snap, &out[len(out)-1], turns, starts, ends, updates)
		turns, starts, ends, updates = turns[:0], starts[:0], ends[:0], updates[:0]
	}
	for rows.Next() {
		var c sessionCols
		var turnID, meta sql.NullString
		var started, created, completed, updated stamp
		var hasMsg sql.NullBool
		dest := c.dest(&turnID, &started, &created, &completed, &updated, &meta, &hasMsg)
		if err := rows.Scan(dest...); err != nil {
			return nil, r.wrap("read sessions (metadata as text)", err)
		}
		if len(out) == 0 || out[len(out)-1].ID != c.id.String {
			flush()
			out = append(out, c.session(snap))
		}
		if !turnID.Valid {
			continue
		}
		turns = append(turns, authority.Turn{
			ID:          turnID.String,
			StartedAt:   started.authority(),
			CreatedAt:   created.authority(),
			CompletedAt: completed.authority(),
			Metadata:    nullPtr(meta),
			HasMessages: hasMsg.Bool,
		})
		starts, ends, updates = append(starts, started), append(ends, completed), append(updates, updated)
	}
	if err := rows.Err(); err != nil {
		return nil, r.wrap("read sessions (metadata as text)", err)
	}
	flush()
	return out, nil
}

// resolveInGo applies the Go rule to one session's turns (fallback path).
func (r *Reader) resolveInGo(snap *model.Snapshot, s *model.Session, turns []authority.Turn, starts, ends, updates []stamp) {
	res := authority.Resolve(r.dialect, turns)
	if res.Current >= 0 {
		t, row := turns[res.Current], model.TurnRow(turns[res.Current].ID)
		s.Current = &model.Turn{ID: t.ID, Open: t.Open(), StartedAt: starts[res.Current].time(snap, row), CompletedAt: ends[res.Current].time(snap, row)}
		if !s.Current.Open {
			s.Current.UpdatedAt = updates[res.Current].time(snap, row)
		}
	}
	if res.Kandev >= 0 {
		s.KandevTurnID = turns[res.Kandev].ID
	}
	s.OpenTurns = len(res.Open)
	if len(res.Open) > 1 {
		s.SecondOpenStartedAt = starts[res.Open[1]].time(snap, model.TurnRow(turns[res.Open[1]].ID))
	}
	// Validity is checked on the turns the answer rests on, as the fast
	// statement does: the current turn, kandev's turn, the newest
	// conversational turn and the open turns.
	rests := append([]int{res.Current, res.Kandev, res.Newest}, res.Open...)
	seen := map[int]bool{}
	for _, i := range rests {
		if i < 0 || seen[i] {
			continue
		}
		seen[i] = true
		if _, kind := authority.TurnFlags(r.dialect, turns[i].Metadata); kind == authority.Malformed {
			snap.Malformed = append(snap.Malformed, model.TurnRow(turns[i].ID))
			s.MalformedMetadata = true
		}
	}
}
