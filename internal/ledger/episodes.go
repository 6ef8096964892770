package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// decideLock serialises decisions across processes on PostgreSQL (SQLite's
// immediate transactions already do).
const decideLock = 7214392

// Decide runs one decision in one transaction: it loads the open episodes,
// asks plan for the changes, and applies them. Concurrent deciders on one
// ledger run one after the other, so two processes never open the same
// episode twice or decide the same step twice.
func (s *Store) Decide(ctx context.Context, plan func(model.Ledger) (model.Plan, error)) (model.Plan, model.Applied, error) {
	return s.DecideFor(ctx, nil, plan)
}

// DecideFor is Decide for a plan that needs, beside what the ledger loads,
// the stored actions that want names by key (policy.Wanted: each episode's
// newest due step, which a policy edited while the episode is open can make
// an old one; see openActionsSQL).
func (s *Store) DecideFor(ctx context.Context, want func(model.Ledger) []string, plan func(model.Ledger) (model.Plan, error)) (model.Plan, model.Applied, error) {
	var p model.Plan
	applied, err := s.decide(ctx, func(tx *sql.Tx) (model.Plan, error) {
		st, err := s.loadOpen(ctx, tx, want)
		if err != nil {
			return model.Plan{}, err
		}
		p, err = plan(st)
		return p, err
	})
	if err != nil {
		return model.Plan{}, model.Applied{}, err
	}
	return p, applied, nil
}

// DecideOn is Decide for one episode read whole, every action of its
// history, inside the same serialised transaction: a decision that must
// see what a concurrent one saved a moment ago (one acting click per
// episode, whoever clicks first) reads it here, never from an earlier read.
// The episode's absence is sql.ErrNoRows, wrapped.
func (s *Store) DecideOn(ctx context.Context, id string, plan func(model.Episode) (model.Plan, error)) (model.Applied, error) {
	return s.decide(ctx, func(tx *sql.Tx) (model.Plan, error) {
		e, err := s.episode(ctx, tx, id)
		if err != nil {
			return model.Plan{}, err
		}
		return plan(e)
	})
}

// begin starts a transaction; on PostgreSQL one at READ COMMITTED,
// whatever the server's or the role's default_transaction_isolation. A
// decision reads after it takes its lock and must see what the decision
// before it committed: at REPEATABLE READ its snapshot would be taken by
// the lock's statement, before the wait, and two clicks would both act.
func (s *Store) begin(ctx context.Context) (*sql.Tx, error) {
	var opts *sql.TxOptions
	if s.pg {
		opts = &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	}
	return s.db.BeginTx(ctx, opts)
}

// decide runs plan and applies what it returns in one transaction, after
// every other decision on the ledger (see decideLock).
func (s *Store) decide(ctx context.Context, plan func(*sql.Tx) (model.Plan, error)) (model.Applied, error) {
	tx, err := s.begin(ctx)
	if err != nil {
		return model.Applied{}, s.wrap("begin decision", err)
	}
	defer func() { _ = tx.Rollback() }()
	if s.pg {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", decideLock); err != nil {
			return model.Applied{}, s.wrap("lock decision", err)
		}
	}
	p, err := plan(tx)
	if err != nil {
		return model.Applied{}, err
	}
	applied, err := s.apply(ctx, tx, p)
	if err != nil {
		return model.Applied{}, err
	}
	if err := tx.Commit(); err != nil {
		return model.Applied{}, s.wrap("commit decision", err)
	}
	return applied, nil
}

// Peek loads the open episodes without changing anything (the status page,
// a standby's gauges).
func (s *Store) Peek(ctx context.Context) (model.Ledger, error) {
	return s.loadOpen(ctx, s.db, nil)
}

// PeekFor is Peek with the actions want names, as DecideFor loads them
// (--dry-run decides from it).
func (s *Store) PeekFor(ctx context.Context, want func(model.Ledger) []string) (model.Ledger, error) {
	return s.loadOpen(ctx, s.db, want)
}

const episodeCols = `id, identity, kind, session_id, task_id, workspace_id, turn_id, pending_id, task_title,
  since_us, opened_us, last_seen_us, missing_since_us, resolved_us, resolution, kind_changes, finding, cleared`

// episodeRow receives one episode row; dest and episode are split so that
// a join can scan an action and its episode in one call (DueActions).
type episodeRow struct {
	e                   model.Episode
	since, opened, seen int64
	missing, resolved   sql.NullInt64
}

func (r *episodeRow) dest() []any {
	e := &r.e
	return []any{&e.ID, &e.Identity, &e.Kind, &e.SessionID, &e.TaskID, &e.WorkspaceID, &e.TurnID, &e.PendingID, &e.TaskTitle,
		&r.since, &r.opened, &r.seen, &r.missing, &r.resolved, &e.Resolution, &e.KindChanges, &e.Finding, &e.Cleared}
}

func (r *episodeRow) episode() model.Episode {
	e := r.e
	e.Since, e.OpenedAt, e.LastSeen = fromUS(r.since), fromUS(r.opened), fromUS(r.seen)
	e.MissingSince, e.ResolvedAt = fromNullUS(r.missing), fromNullUS(r.resolved)
	return e
}

func scanEpisode(sc interface{ Scan(...any) error }) (model.Episode, error) {
	var r episodeRow
	err := sc.Scan(r.dest()...)
	return r.episode(), err
}

const actionCols = `key, episode_id, seq, step, repeat_no, action, channel, mention, parent_key, digest, body, state,
  created_us, updated_us, next_attempt_us, attempts, uncertain, claim_token, claimed_by, claimed_us,
  result_channel, result_ts, error, conflicts`

// actionRow receives one action row (see episodeRow).
type actionRow struct {
	a                               model.Action
	created, updated, next, claimed int64
	uncertain                       int
}

func (r *actionRow) dest() []any {
	a := &r.a
	return []any{&a.Key, &a.EpisodeID, &a.Seq, &a.Step, &a.Repeat, &a.Kind, &a.Channel, &a.Mention, &a.ParentKey, &a.Digest, &a.Body, &a.State,
		&r.created, &r.updated, &r.next, &a.Attempts, &r.uncertain, &a.ClaimToken, &a.ClaimedBy, &r.claimed,
		&a.ResultChannel, &a.ResultTS, &a.Error, &a.Conflicts}
}

func (r *actionRow) action() model.Action {
	a := r.a
	a.CreatedAt, a.UpdatedAt, a.NextAttempt, a.ClaimedAt = fromUS(r.created), fromUS(r.updated), fromUS(r.next), fromUS(r.claimed)
	a.Uncertain = r.uncertain != 0
	return a
}

func scanAction(sc interface{ Scan(...any) error }) (model.Action, error) {
	var r actionRow
	err := sc.Scan(r.dest()...)
	return r.action(), err
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func closeRows(rows *sql.Rows) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

// apply writes a plan inside the transaction that decided it, so that an
// action row exists before anything is delivered for it. On
// PostgreSQL each part is written in batches (batch.go).
func (s *Store) apply(ctx context.Context, tx *sql.Tx, p model.Plan) (model.Applied, error) {
	for _, write := range []func() error{
		func() error { return s.openEpisodes(ctx, tx, p.Open) },
		func() error { return s.refresh(ctx, tx, p.Refresh) },
		func() error { return s.markMissing(ctx, tx, p.Missing) },
		func() error { return s.resolveEpisodes(ctx, tx, p.Resolve) },
		func() error { return s.supersede(ctx, tx, p.Supersede, us(p.Now)) },
		func() error { return s.requeue(ctx, tx, p.Requeue, us(p.Now)) },
	} {
		if err := write(); err != nil {
			return model.Applied{}, err
		}
	}
	return s.saveActions(ctx, tx, p.Actions)
}

// Episodes lists episodes, newest first; open only when openOnly. With a
// limit it returns up to limit+1, so the caller can say there are more; 0
// lists all.
func (s *Store) Episodes(ctx context.Context, openOnly bool, limit int) ([]model.Episode, error) {
	q := "SELECT " + episodeCols + " FROM episodes"
	if openOnly {
		q += " WHERE resolved_us IS NULL"
	}
	q += " ORDER BY opened_us DESC, id"
	if limit > 0 { // one more than asked, so the caller can tell there are more
		q += fmt.Sprintf(" LIMIT %d", limit+1)
	}
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		return nil, s.wrap("list episodes", err)
	}
	var out []model.Episode
	err = scanEpisodes(rows, func(e model.Episode) { out = append(out, e) })
	return out, s.wrap("list episodes", err)
}

// scanEpisodes reads every row of an episodes query, then closes it.
func scanEpisodes(rows *sql.Rows, add func(model.Episode)) error {
	for rows.Next() {
		e, err := scanEpisode(rows)
		if err != nil {
			_ = rows.Close()
			return err
		}
		add(e)
	}
	return closeRows(rows)
}

// Episode reads one episode with its actions.
func (s *Store) Episode(ctx context.Context, id string) (model.Episode, error) {
	return s.episode(ctx, s.db, id)
}

func (s *Store) episode(ctx context.Context, q querier, id string) (model.Episode, error) {
	e, err := scanEpisode(q.QueryRowContext(ctx, s.q("SELECT "+episodeCols+" FROM episodes WHERE id = ?"), id))
	if err != nil {
		return model.Episode{}, s.wrap("read episode "+id, err)
	}
	rows, err := q.QueryContext(ctx, s.q("SELECT "+actionCols+" FROM actions WHERE episode_id = ? ORDER BY created_us, key"), id)
	if err != nil {
		return model.Episode{}, s.wrap("read actions", err)
	}
	err = scanActions(rows, func(a model.Action) { e.Actions = append(e.Actions, a) })
	return e, s.wrap("read actions", err)
}

// scanActions reads every row of an actions query, then closes it.
func scanActions(rows *sql.Rows, add func(model.Action)) error {
	for rows.Next() {
		a, err := scanAction(rows)
		if err != nil {
			_ = rows.Close()
			return err
		}
		add(a)
	}
	return closeRows(rows)
}

// Prune deletes episodes resolved before cutoff, with their actions, in
// one transaction. An episode with an action still pending or claimed is
// kept whatever its age: a resolve edit held back by a silence longer than
// the retention, or a claim in flight, must still go out or settle, never
// vanish with its row.
func (s *Store) Prune(ctx context.Context, cutoff time.Time) (int64, error) {
	tx, err := s.begin(ctx)
	if err != nil {
		return 0, s.wrap("prune", err)
	}
	defer func() { _ = tx.Rollback() }()
	const prunable = `resolved_us < ? AND NOT EXISTS (SELECT 1 FROM actions u
	  WHERE u.episode_id = episodes.id AND u.state IN ('pending', 'claimed'))`
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM actions WHERE episode_id IN (SELECT id FROM episodes WHERE `+prunable+`)`), us(cutoff)); err != nil {
		return 0, s.wrap("prune actions", err)
	}
	res, err := tx.ExecContext(ctx, s.q(`DELETE FROM episodes WHERE `+prunable), us(cutoff))
	if err != nil {
		return 0, s.wrap("prune episodes", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, s.wrap("prune episodes", err)
	}
	return n, s.wrap("prune", tx.Commit())
}
