package kandev

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/watchdogd/watchdogd/internal/authority"
)

// Snapshot reads every active session in one read-only transaction with a
// fixed number of statements, whatever the number of sessions: never one
// query per session.
func (r *Reader) Snapshot(ctx context.Context) (*Snapshot, error) {
	return r.snapshot(ctx, nil)
}

// TaskSnapshot reads the active sessions of one task the same way: the
// fresh check right before an action is delivered.
func (r *Reader) TaskSnapshot(ctx context.Context, taskID string) (*Snapshot, error) {
	return r.snapshot(ctx, &taskID)
}

func (r *Reader) snapshot(ctx context.Context, taskID *string) (snap *Snapshot, err error) {
	snap = &Snapshot{Dialect: r.dialect}
	opts := &sql.TxOptions{ReadOnly: true}
	if r.dialect == authority.Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	} else {
		opts = nil // modernc opens a deferred transaction: one WAL read snapshot
	}
	r.count(snap, "BEGIN")
	tx, err := r.db.BeginTx(ctx, opts)
	if err != nil {
		return nil, r.wrap("begin read transaction", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var args []any
	if taskID != nil {
		args = append(args, *taskID)
	}
	sessions, err := r.readSessions(ctx, tx, snap, args)
	if err != nil {
		return nil, err
	}
	if err := r.readMessages(ctx, tx, snap, sessions); err != nil {
		return nil, err
	}
	r.count(snap, "COMMIT")
	if err := tx.Commit(); err != nil {
		return nil, r.wrap("end read transaction", err)
	}
	snap.Sessions = sessions
	return snap, nil
}

func (r *Reader) count(snap *Snapshot, q string) {
	snap.Statements++
	if r.onStatement != nil {
		r.onStatement(q)
	}
}

func (r *Reader) query(ctx context.Context, tx *sql.Tx, snap *Snapshot, q string, args ...any) (*sql.Rows, error) {
	r.count(snap, q)
	return tx.QueryContext(ctx, q, args...)
}

func (r *Reader) exec(ctx context.Context, tx *sql.Tx, snap *Snapshot, q string) error {
	r.count(snap, q)
	_, err := tx.ExecContext(ctx, q)
	return err
}

func (r *Reader) wrap(what string, err error) error {
	return fmt.Errorf("kandev database %s: %s: %w", r.name, what, err)
}

// readSessions runs the fast statement; on PostgreSQL it runs under a
// savepoint and, when a metadata value fails the ::jsonb cast (any SQLSTATE of
// class 22, or 54001 for JSON nested past the server's stack), rolls back to
// it and reads the same selection with metadata as text for the Go rule.
// Same snapshot, still a fixed number of statements.
func (r *Reader) readSessions(ctx context.Context, tx *sql.Tx, snap *Snapshot, args []any) ([]Session, error) {
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
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || !(strings.HasPrefix(pgErr.Code, "22") || pgErr.Code == "54001") {
		return nil, err
	}
	if err := r.exec(ctx, tx, snap, "ROLLBACK TO SAVEPOINT watchdogd_fast"); err != nil {
		return nil, r.wrap("rollback to savepoint", err)
	}
	snap.Fallback = true
	return r.fallbackSessions(ctx, tx, snap, args)
}

// sessionCols are the columns both session statements start with.
type sessionCols struct {
	id, taskID, state          string
	primary                    boolish
	started                    stamp
	title, workspace, taskMeta sql.NullString
	queued                     int64
}

func (c *sessionCols) dest() []any {
	return []any{&c.id, &c.taskID, &c.state, &c.primary, &c.started, &c.title, &c.workspace, &c.taskMeta, &c.queued}
}

func (c *sessionCols) session(snap *Snapshot) Session {
	return Session{
		ID: c.id, TaskID: c.taskID, State: c.state, IsPrimary: bool(c.primary),
		StartedAt:    c.started.time(snap),
		TaskTitle:    c.title.String,
		WorkspaceID:  c.workspace.String,
		TaskMetadata: authority.ParseMetadata(r2d(snap), nullPtr(c.taskMeta)),
		Queued:       int(c.queued),
	}
}

func (r *Reader) fastSessions(ctx context.Context, tx *sql.Tx, snap *Snapshot, args []any) ([]Session, error) {
	rows, err := r.query(ctx, tx, snap, sessionsQuery(r.dialect, r.hasQueued, len(args) > 0), args...)
	if err != nil {
		return nil, r.wrapPG("read sessions", err)
	}
	defer func() { _ = rows.Close() }()
	var out []Session
	for rows.Next() {
		var c sessionCols
		var curID, kandevID, malformed sql.NullString
		var curStarted, curCompleted, secondOpen stamp
		var openTurns int64
		dest := append(c.dest(), &curID, &curStarted, &curCompleted, &kandevID, &openTurns, &secondOpen, &malformed)
		if err := rows.Scan(dest...); err != nil {
			return nil, r.wrap("read sessions", err)
		}
		s := c.session(snap)
		if curID.Valid {
			s.Current = &Turn{ID: curID.String, Open: curCompleted.null(), StartedAt: curStarted.time(snap)}
		}
		s.KandevTurnID = kandevID.String
		s.OpenTurns = int(openTurns)
		if s.OpenTurns > 1 {
			s.SecondOpenStartedAt = secondOpen.time(snap)
		}
		if malformed.Valid {
			for _, id := range strings.Split(malformed.String, "\x1f") {
				snap.Malformed = append(snap.Malformed, RowRef{Table: "task_session_turns", ID: id})
			}
			s.MalformedMetadata = true
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, r.wrapPG("read sessions", err)
	}
	return out, nil
}

// wrapPG keeps a *pgconn.PgError reachable for the fallback decision.
func (r *Reader) wrapPG(what string, err error) error { return r.wrap(what, err) }

func (r *Reader) fallbackSessions(ctx context.Context, tx *sql.Tx, snap *Snapshot, args []any) ([]Session, error) {
	rows, err := r.query(ctx, tx, snap, sessionTurnsQuery(r.dialect, r.hasQueued, len(args) > 0), args...)
	if err != nil {
		return nil, r.wrap("read sessions (metadata as text)", err)
	}
	defer func() { _ = rows.Close() }()
	var out []Session
	var turns []authority.Turn
	var starts []stamp
	flush := func() {
		if len(out) == 0 {
			return
		}
		r.resolveInGo(snap, &out[len(out)-1], turns, starts)
		turns, starts = turns[:0], starts[:0]
	}
	for rows.Next() {
		var c sessionCols
		var turnID, meta sql.NullString
		var started, created, completed stamp
		var hasMsg sql.NullBool
		dest := append(c.dest(), &turnID, &started, &created, &completed, &meta, &hasMsg)
		if err := rows.Scan(dest...); err != nil {
			return nil, r.wrap("read sessions (metadata as text)", err)
		}
		if len(out) == 0 || out[len(out)-1].ID != c.id {
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
		starts = append(starts, started)
	}
	if err := rows.Err(); err != nil {
		return nil, r.wrap("read sessions (metadata as text)", err)
	}
	flush()
	return out, nil
}

// resolveInGo applies the Go rule to one session's turns (fallback path).
func (r *Reader) resolveInGo(snap *Snapshot, s *Session, turns []authority.Turn, starts []stamp) {
	res := authority.Resolve(r.dialect, turns)
	if res.Current >= 0 {
		t := turns[res.Current]
		s.Current = &Turn{ID: t.ID, Open: t.Open(), StartedAt: starts[res.Current].time(snap)}
	}
	if res.Kandev >= 0 {
		s.KandevTurnID = turns[res.Kandev].ID
	}
	s.OpenTurns = len(res.Open)
	if len(res.Open) > 1 {
		s.SecondOpenStartedAt = starts[res.Open[1]].time(snap)
	}
	for _, t := range turns {
		if _, kind := authority.TurnFlags(r.dialect, t.Metadata); kind == authority.Malformed {
			snap.Malformed = append(snap.Malformed, RowRef{Table: "task_session_turns", ID: t.ID})
			s.MalformedMetadata = true
		}
	}
}

// readMessages reads the current turns' messages in one statement.
func (r *Reader) readMessages(ctx context.Context, tx *sql.Tx, snap *Snapshot, sessions []Session) error {
	byTurn := map[string]int{}
	ids := []string{}
	for i, s := range sessions {
		if s.Current != nil {
			byTurn[s.Current.ID] = i
			ids = append(ids, s.Current.ID)
		}
	}
	var arg any = ids
	if r.dialect == authority.SQLite {
		b, err := json.Marshal(ids)
		if err != nil {
			return fmt.Errorf("encode turn ids: %w", err)
		}
		arg = string(b)
	}
	rows, err := r.query(ctx, tx, snap, messagesQuery(r.dialect), arg)
	if err != nil {
		return r.wrap("read current-turn messages", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var turnID, id, author, typ string
		var content, meta sql.NullString
		var created, updated stamp
		if err := rows.Scan(&turnID, &id, &author, &typ, &content, &meta, &created, &updated); err != nil {
			return r.wrap("read current-turn messages", err)
		}
		if id == "" && r.dialect == authority.SQLite && updated.valid {
			// The aggregate row carries "updated_at \x1f type".
			if at, t, ok := strings.Cut(updated.text, "\x1f"); ok {
				updated.text, typ = at, t
			}
		}
		i, ok := byTurn[turnID]
		if !ok {
			continue
		}
		if id == "" && updated.null() {
			continue // the turn has no plain agent message
		}
		m := Message{
			ID: id, Author: author, Type: typ, Content: content.String,
			Meta:      authority.ParseMetadata(r.dialect, nullPtr(meta)),
			CreatedAt: created.time(snap),
			UpdatedAt: updated.time(snap),
		}
		if m.Meta.Kind == authority.Malformed {
			snap.Malformed = append(snap.Malformed, RowRef{Table: "task_session_messages", ID: id})
			sessions[i].MalformedMetadata = true
		}
		sessions[i].Messages = append(sessions[i].Messages, m)
	}
	if err := rows.Err(); err != nil {
		return r.wrap("read current-turn messages", err)
	}
	return nil
}

func r2d(snap *Snapshot) authority.Dialect { return snap.Dialect }

func nullPtr(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}
