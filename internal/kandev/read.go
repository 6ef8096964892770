package kandev

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

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
	if !errors.As(err, &pgErr) || !strings.HasPrefix(pgErr.Code, "22") && pgErr.Code != "54001" {
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
	rows, err := r.query(ctx, tx, snap, sessionsQuery(r.dialect, r.hasQueued, len(args) > 0, r.probeIndex), args...)
	if err != nil {
		return nil, r.wrapPG("read sessions", err)
	}
	defer func() { _ = rows.Close() }()
	var out []Session
	for rows.Next() {
		var c sessionCols
		var openJSON, kandevJSON, convJSON sql.NullString
		if err := rows.Scan(append(c.dest(), &openJSON, &kandevJSON, &convJSON)...); err != nil {
			return nil, r.wrap("read sessions", err)
		}
		s := c.session(snap)
		if err := r.resolveProbes(snap, &s, openJSON, kandevJSON, convJSON); err != nil {
			return nil, r.wrap("read sessions", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, r.wrapPG("read sessions", err)
	}
	return out, nil
}

// probeTurn is one turn a probe returned: [id, started_at, created_at or
// completed_at, bad id] and, for kandev's turn, its lifecycle flag.
type probeTurn struct {
	id        string
	started   *string
	other     *string
	bad       *string
	lifecycle bool
}

func decodeTurns(raw sql.NullString, want int, list bool) ([]probeTurn, error) {
	if !raw.Valid {
		return nil, nil
	}
	v, err := parseProbe(raw.String)
	var arrays [][]*string
	if err == nil {
		if list {
			arrays, err = v.stringLists()
		} else {
			var one []*string
			one, err = v.strings()
			arrays = [][]*string{one}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("decode probe %.200q: %w", raw.String, err)
	}
	out := make([]probeTurn, 0, len(arrays))
	for _, a := range arrays {
		if len(a) != want || a[0] == nil {
			return nil, fmt.Errorf("decode probe %q: want %d fields", raw.String, want)
		}
		t := probeTurn{id: *a[0], started: a[1], other: a[2], bad: a[3]}
		if want == 5 && a[4] != nil {
			// The lifecycle flag, as text: SQLite prints 1/0,
			// PostgreSQL true/false.
			t.lifecycle = *a[4] == "1" || *a[4] == "true"
		}
		out = append(out, t)
	}
	return out, nil
}

// resolveProbes applies D1 to the probes' answers: the newest open turn
// when any is open (open before completed), else the newest eligible
// conversational turn — kandev's turn unless that is a lifecycle turn, in
// which case the statement probed again.
func (r *Reader) resolveProbes(snap *Snapshot, s *Session, openJSON, kandevJSON, convJSON sql.NullString) error {
	open, err := decodeTurns(openJSON, 4, true)
	if err != nil {
		return err
	}
	kv, err := decodeTurns(kandevJSON, 5, false)
	if err != nil {
		return err
	}
	newest, err := decodeTurns(convJSON, 4, false)
	if err != nil {
		return err
	}
	if len(kv) > 0 && !kv[0].lifecycle {
		newest = kv
	}
	// Newest first by D1 keys 2–4 (all are open), compared as the dialect
	// compares them.
	key := func(o probeTurn) authority.Turn {
		return authority.Turn{ID: o.id, StartedAt: authority.StampOf(r.dialect, o.started), CreatedAt: authority.StampOf(r.dialect, o.other)}
	}
	sort.SliceStable(open, func(i, j int) bool { return authority.Newer(key(open[i]), key(open[j])) })
	s.OpenTurns = len(open)
	switch {
	case len(open) > 0:
		s.Current = &Turn{ID: open[0].id, Open: true, StartedAt: parseStamp(snap, open[0].started)}
	case len(newest) > 0:
		s.Current = &Turn{ID: newest[0].id, Open: newest[0].other == nil, StartedAt: parseStamp(snap, newest[0].started)}
	}
	if len(open) > 1 {
		s.SecondOpenStartedAt = parseStamp(snap, open[len(open)-2].started)
	}
	if len(kv) > 0 {
		s.KandevTurnID = kv[0].id
	}
	seen := map[string]bool{}
	for _, group := range [][]probeTurn{open, newest, kv} {
		for _, t := range group {
			if t.bad != nil && !seen[*t.bad] {
				seen[*t.bad] = true
				snap.Malformed = append(snap.Malformed, RowRef{Table: "task_session_turns", ID: *t.bad})
				s.MalformedMetadata = true
			}
		}
	}
	return nil
}

// parseStamp parses a timestamp a probe returned as text.
func parseStamp(snap *Snapshot, p *string) time.Time {
	if p == nil {
		return time.Time{}
	}
	return stamp{valid: true, text: *p}.time(snap)
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
	// Validity is checked on the turns the answer rests on, as the fast
	// statement does: the current turn, kandev's turn, the open turns.
	rests := append([]int{res.Current, res.Kandev}, res.Open...)
	seen := map[int]bool{}
	for _, i := range rests {
		if i < 0 || seen[i] {
			continue
		}
		seen[i] = true
		if _, kind := authority.TurnFlags(r.dialect, turns[i].Metadata); kind == authority.Malformed {
			snap.Malformed = append(snap.Malformed, RowRef{Table: "task_session_turns", ID: turns[i].ID})
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
		var turnID string
		var probe sql.NullString
		if err := rows.Scan(&turnID, &probe); err != nil {
			return r.wrap("read current-turn messages", err)
		}
		i, ok := byTurn[turnID]
		if !ok || !probe.Valid {
			continue
		}
		msgs, err := r.decodeMessages(snap, probe.String)
		if err != nil {
			return r.wrap("read current-turn messages", err)
		}
		for _, m := range msgs {
			if m.Meta.Kind == authority.Malformed {
				snap.Malformed = append(snap.Malformed, RowRef{Table: "task_session_messages", ID: m.ID})
				sessions[i].MalformedMetadata = true
			}
		}
		sessions[i].Messages = msgs
	}
	if err := rows.Err(); err != nil {
		return r.wrap("read current-turn messages", err)
	}
	return nil
}

// decodeMessages reads one turn's probe: [newest plain agent updated_at,
// its type, [[id, author, type, content, metadata, created_at,
// updated_at]…]].
func (r *Reader) decodeMessages(snap *Snapshot, probe string) ([]Message, error) {
	v, err := parseProbe(probe)
	if err == nil && len(v.arr) != 3 {
		err = errors.New("want 3 fields")
	}
	if err != nil {
		return nil, fmt.Errorf("decode messages %.200q: %w", probe, err)
	}
	var out []Message
	if at := v.arr[0].str; at != nil {
		m := Message{Author: "agent", UpdatedAt: parseStamp(snap, at), Type: deref(v.arr[1].str)}
		out = append(out, m)
	}
	rows, err := v.arr[2].stringLists()
	if err != nil {
		return nil, fmt.Errorf("decode messages: %w", err)
	}
	for _, a := range rows {
		if len(a) != 7 || a[0] == nil {
			return nil, fmt.Errorf("decode messages: want 7 fields")
		}
		m := Message{ID: *a[0], Meta: authority.ParseMetadata(r.dialect, a[4]),
			CreatedAt: parseStamp(snap, a[5]), UpdatedAt: parseStamp(snap, a[6])}
		m.Author, m.Type, m.Content = deref(a[1]), deref(a[2]), deref(a[3])
		out = append(out, m)
	}
	return out, nil
}

func r2d(snap *Snapshot) authority.Dialect { return snap.Dialect }

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func nullPtr(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}
