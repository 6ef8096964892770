package kandev

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/kandevsql"
	"github.com/watchdogd/watchdogd/internal/model"
)

// Snapshot reads every active session in one read-only transaction with a
// fixed number of statements, whatever the number of sessions: never one
// query per session.
func (r *Reader) Snapshot(ctx context.Context) (*model.Snapshot, error) {
	return r.snapshot(ctx, nil)
}

// TaskSnapshot reads the active sessions of one task the same way: the
// fresh check right before an action is delivered.
func (r *Reader) TaskSnapshot(ctx context.Context, taskID string) (*model.Snapshot, error) {
	return r.snapshot(ctx, &taskID)
}

func (r *Reader) snapshot(ctx context.Context, taskID *string) (snap *model.Snapshot, err error) {
	snap = &model.Snapshot{Dialect: r.dialect}
	limit := "infinity" // no limit: SQLite's julianday reads it as NULL, PostgreSQL as after every instant
	var notAfter time.Time
	if r.notAfter != nil {
		notAfter = r.notAfter()
		limit = LimitText(notAfter)
	}
	r.count(snap, "BEGIN")
	tx, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if r.pooled {
		// Behind a pooler the session settings could not be sent at
		// startup; this one lasts only as long as the transaction.
		if err := r.exec(ctx, tx, snap, "SET LOCAL jit = off"); err != nil {
			return nil, r.wrap("turn JIT off", err)
		}
	}
	var args []any
	if taskID != nil {
		args = append(args, *taskID)
	}
	sessions, err := r.readSessions(ctx, tx, snap, args)
	if err != nil {
		return nil, err
	}
	sortSessions(sessions)
	if err := r.readMessages(ctx, tx, snap, sessions, limit); err != nil {
		return nil, err
	}
	if err := r.readBeforeBoot(ctx, tx, snap, sessions, limit); err != nil {
		return nil, err
	}
	if err := r.readReplies(ctx, tx, snap, sessions, limit, notAfter); err != nil {
		return nil, err
	}
	r.count(snap, "COMMIT")
	if err := tx.Commit(); err != nil {
		return nil, r.wrap("end read transaction", err)
	}
	snap.Sessions = sessions
	if r.notAfter != nil {
		snap.DropFuture(notAfter)
	}
	if taskID == nil {
		r.lastSessions.Store(int64(len(sessions)))
	}
	return snap, nil
}

// LimitText is a limit as the messages statement takes it (its second
// parameter): UTC wall time, which SQLite's julianday and PostgreSQL's
// timestamp both read.
func LimitText(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000000") }

// begin opens a read-only transaction that reads one consistent state:
// REPEATABLE READ on PostgreSQL; on SQLite, modernc's deferred transaction,
// one WAL read snapshot.
func (r *Reader) begin(ctx context.Context) (*sql.Tx, error) {
	opts := &sql.TxOptions{ReadOnly: true}
	if r.dialect == authority.Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	} else {
		opts = nil
	}
	tx, err := r.db.BeginTx(ctx, opts)
	if err != nil {
		return nil, r.wrap("begin read transaction", err)
	}
	return tx, nil
}

// sortSessions puts sessions in byte order of their ids, as Snapshot
// promises: the fast statement returns them unordered, and the fallback's
// ORDER BY follows the server's collation, which need not be byte order.
func sortSessions(s []model.Session) {
	byID := func(a, b model.Session) int { return strings.Compare(a.ID, b.ID) }
	if !slices.IsSortedFunc(s, byID) {
		slices.SortFunc(s, byID)
	}
}

func (r *Reader) count(snap *model.Snapshot, q string) {
	snap.Statements++
	if r.onStatement != nil {
		r.onStatement(q)
	}
}

func (r *Reader) query(ctx context.Context, tx *sql.Tx, snap *model.Snapshot, q string, args ...any) (*sql.Rows, error) {
	r.count(snap, q)
	return tx.QueryContext(ctx, q, args...)
}

func (r *Reader) exec(ctx context.Context, tx *sql.Tx, snap *model.Snapshot, q string) error {
	r.count(snap, q)
	_, err := tx.ExecContext(ctx, q)
	return err
}

func (r *Reader) wrap(what string, err error) error {
	return fmt.Errorf("kandev database %s: %s: %w", r.name, what, err)
}

// sessionCols are the columns both session statements start with.
type sessionCols struct {
	id                         sql.NullString // NULL on SQLite only: see fastSessions
	taskID, state              string
	primary                    boolish
	started                    stamp
	title, workspace, taskMeta sql.NullString
	queued                     int64
}

// dest is the Scan destinations: these columns, then the statement's own.
func (c *sessionCols) dest(more ...any) []any {
	return append(append(make([]any, 0, 9+len(more)),
		&c.id, &c.taskID, &c.state, &c.primary, &c.started, &c.title, &c.workspace, &c.taskMeta, &c.queued), more...)
}

func (c *sessionCols) session(snap *model.Snapshot) model.Session {
	return model.Session{
		ID: c.id.String, TaskID: c.taskID, State: c.state, IsPrimary: bool(c.primary),
		StartedAt:    c.started.time(snap, model.RowRef{Table: "task_sessions", ID: c.id.String}),
		TaskTitle:    model.Cut(c.title.String, model.MaxText),
		WorkspaceID:  c.workspace.String,
		TaskMetadata: authority.ParseMetadata(snap.Dialect, nullPtr(c.taskMeta)),
		Queued:       int(c.queued),
	}
}

func (r *Reader) fastSessions(ctx context.Context, tx *sql.Tx, snap *model.Snapshot, args []any) ([]model.Session, error) {
	rows, err := r.query(ctx, tx, snap, kandevsql.Sessions(r.dialect, r.hasQueued, len(args) > 0, r.probeIndex), args...)
	if err != nil {
		return nil, r.wrap("read sessions", err)
	}
	defer func() { _ = rows.Close() }()
	out := r.sessionsSlice(args)
	// One set of destinations for every row: Scan overwrites each of them
	// (NULL included), and the row is copied out before the next.
	var c sessionCols
	var openJSON, kandevJSON, convJSON sql.NullString
	dest := c.dest(&openJSON, &kandevJSON, &convJSON)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, r.wrap("read sessions", err)
		}
		if !c.id.Valid {
			// SQLite's TEXT PRIMARY KEY admits a NULL; kandev cannot read
			// such a session, nor can anything name it to act on it. It is
			// listed, not scanned, and the other sessions are.
			snap.Malformed = append(snap.Malformed, model.RowRef{Table: "task_sessions", Of: "NULL id, task " + c.taskID})
			continue
		}
		s := c.session(snap)
		if err := r.resolveProbes(snap, &s, openJSON, kandevJSON, convJSON); err != nil {
			return nil, r.wrap("read sessions", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, r.wrap("read sessions", err)
	}
	return out, nil
}

// sessionsSlice is where a snapshot's sessions go: sized as the last full
// snapshot was, for a full one (no args); empty for one task's.
func (r *Reader) sessionsSlice(args []any) []model.Session {
	if len(args) > 0 {
		return nil
	}
	return make([]model.Session, 0, r.lastSessions.Load())
}

// probeTurn is one turn a probe returned: [id, started_at, created_at or
// completed_at, bad id], then, for kandev's turn, its lifecycle flag and,
// for a completed turn's probes, its updated_at. A NULL id (SQLite only)
// is kept, as nullID: the row still takes its place in the rule, as it
// does in kandev's own ordered reads.
type probeTurn struct {
	id        string
	nullID    bool
	started   *string
	other     *string
	bad       *string
	lifecycle bool
	updated   *string
}

// probeLayout says where a probe's optional fields are (-1: absent).
type probeLayout struct{ fields, lifecycle, updated int }

var (
	openProbe   = probeLayout{fields: 4, lifecycle: -1, updated: -1}
	kandevProbe = probeLayout{fields: 6, lifecycle: 4, updated: 5}
	convProbe   = probeLayout{fields: 5, lifecycle: -1, updated: 4}
)

func decodeTurns(raw sql.NullString, l probeLayout, list bool) ([]probeTurn, error) {
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
		if len(a) != l.fields {
			return nil, fmt.Errorf("decode probe %.200q: want %d fields", raw.String, l.fields)
		}
		t := probeTurn{id: deref(a[0]), nullID: a[0] == nil, started: a[1], other: a[2], bad: a[3]}
		if l.lifecycle >= 0 && a[l.lifecycle] != nil {
			// The lifecycle flag, as text: SQLite prints 1/0,
			// PostgreSQL true/false.
			t.lifecycle = *a[l.lifecycle] == "1" || *a[l.lifecycle] == "true"
		}
		if l.updated >= 0 {
			t.updated = a[l.updated]
		}
		out = append(out, t)
	}
	return out, nil
}

// resolveProbes applies D1 to the probes' answers: the newest open turn
// when any is open (open before completed), else the newest eligible
// conversational turn — kandev's turn unless that is a lifecycle turn, in
// which case the statement probed again.
func (r *Reader) resolveProbes(snap *model.Snapshot, s *model.Session, openJSON, kandevJSON, convJSON sql.NullString) error {
	open, err := decodeTurns(openJSON, openProbe, true)
	if err != nil {
		return err
	}
	kv, err := decodeTurns(kandevJSON, kandevProbe, false)
	if err != nil {
		return err
	}
	newest, err := decodeTurns(convJSON, convProbe, false)
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
		s.Current = &model.Turn{ID: open[0].id, NullID: open[0].nullID, Open: true, StartedAt: open[0].startedAt(snap, s.ID)}
	case len(newest) > 0:
		t := newest[0] // its third field is completed_at
		s.Current = &model.Turn{ID: t.id, NullID: t.nullID, Open: t.other == nil, StartedAt: t.startedAt(snap, s.ID),
			CompletedAt: parseStamp(snap, t.other, t.row(s.ID)), UpdatedAt: parseStamp(snap, t.updated, t.row(s.ID))}
	}
	if len(open) > 1 {
		s.SecondOpenStartedAt = open[len(open)-2].startedAt(snap, s.ID)
	}
	if len(kv) > 0 {
		s.KandevTurnID = kv[0].id
	}
	seen := map[model.RowRef]bool{}
	for _, group := range [][]probeTurn{open, newest, kv} {
		for _, t := range group {
			// bad is the turn's id when its metadata is malformed; NULL
			// for a NULL id, which kandev cannot read either.
			if t.bad == nil && !t.nullID {
				continue
			}
			if ref := t.row(s.ID); !seen[ref] {
				seen[ref] = true
				snap.Malformed = append(snap.Malformed, ref)
				s.MalformedMetadata = true
			}
		}
	}
	return nil
}

// row names the turn, by its session when its id is NULL.
func (t probeTurn) row(session string) model.RowRef { return model.TurnRowOf(t.id, t.nullID, session) }

func (t probeTurn) startedAt(snap *model.Snapshot, session string) time.Time {
	return parseStamp(snap, t.started, t.row(session))
}

// parseStamp parses a timestamp a probe returned as text.
func parseStamp(snap *model.Snapshot, p *string, row model.RowRef) time.Time {
	if p == nil {
		return time.Time{}
	}
	return stamp{valid: true, text: *p}.time(snap, row)
}

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

// Statements returns the snapshot's statements for this database, for EXPLAIN
// in benchmarks and docs: the sessions statement and the current-turn
// messages statement (which takes the current turn ids, and the latest
// instant an update is taken to be as LimitText gives it).
func (r *Reader) Statements() (sessions, messages string) {
	return kandevsql.Sessions(r.dialect, r.hasQueued, false, r.probeIndex), kandevsql.Messages(r.dialect, false)
}
