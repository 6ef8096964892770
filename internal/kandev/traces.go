package kandev

import (
	"context"
	"database/sql"

	"github.com/watchdogd/watchdogd/internal/kandevsql"
	"github.com/watchdogd/watchdogd/internal/model"
)

// Traces reads what kandev holds of sessions and turns a snapshot did not
// show — each session's state and whether its task is archived, each
// turn's row and messages (read as a current turn's are) — in one
// read-only transaction and a fixed number of statements: how an episode
// cleared is told from them. A session or turn kandev no longer holds is
// left out of Turns and not Found in Sessions.
func (r *Reader) Traces(ctx context.Context, sessionIDs, turnIDs []string) (*model.Traces, error) {
	snap := &model.Snapshot{Dialect: r.dialect}
	tx, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	out := &model.Traces{Sessions: make(map[string]model.SessionTrace, len(sessionIDs)), Turns: make(map[string]model.TurnTrace, len(turnIDs))}
	if len(sessionIDs) > 0 {
		if err := r.traceSessions(ctx, tx, snap, sessionIDs, out); err != nil {
			return nil, err
		}
	}
	if len(turnIDs) == 0 {
		return out, nil
	}
	turns, err := r.traceTurns(ctx, tx, snap, turnIDs)
	if err != nil {
		return nil, err
	}
	if err := r.readMessages(ctx, tx, snap, turns, "infinity"); err != nil {
		return nil, err
	}
	for _, s := range turns {
		out.Turns[s.Current.ID] = model.TurnTrace{Turn: *s.Current, Messages: s.Messages}
	}
	return out, nil
}

func (r *Reader) traceSessions(ctx context.Context, tx *sql.Tx, snap *model.Snapshot, ids []string, out *model.Traces) error {
	arg, err := r.idsArg(ids)
	if err != nil {
		return err
	}
	rows, err := r.query(ctx, tx, snap, kandevsql.TraceSessions(r.dialect), arg)
	if err != nil {
		return r.wrap("read sessions that ended", err)
	}
	defer func() { _ = rows.Close() }()
	for _, id := range ids {
		out.Sessions[id] = model.SessionTrace{}
	}
	for rows.Next() {
		var id, state sql.NullString
		var archived boolish
		if err := rows.Scan(&id, &state, &archived); err != nil {
			return r.wrap("read sessions that ended", err)
		}
		out.Sessions[id.String] = model.SessionTrace{Found: true, State: state.String, TaskArchived: bool(archived)}
	}
	if err := rows.Err(); err != nil {
		return r.wrap("read sessions that ended", err)
	}
	return nil
}

// traceTurns reads the turns' rows, as sessions whose current turn each
// is, for readMessages to fill.
func (r *Reader) traceTurns(ctx context.Context, tx *sql.Tx, snap *model.Snapshot, ids []string) ([]model.Session, error) {
	arg, err := r.idsArg(ids)
	if err != nil {
		return nil, err
	}
	rows, err := r.query(ctx, tx, snap, kandevsql.TraceTurns(r.dialect), arg)
	if err != nil {
		return nil, r.wrap("read turns that moved on", err)
	}
	defer func() { _ = rows.Close() }()
	var out []model.Session
	for rows.Next() {
		var id sql.NullString
		var started, completed, updated stamp
		if err := rows.Scan(&id, &started, &completed, &updated); err != nil {
			return nil, r.wrap("read turns that moved on", err)
		}
		if !id.Valid {
			continue
		}
		row := model.TurnRow(id.String)
		t := &model.Turn{ID: id.String, Open: !completed.valid, StartedAt: started.time(snap, row), CompletedAt: completed.time(snap, row)}
		if !t.Open {
			t.UpdatedAt = updated.time(snap, row)
		}
		out = append(out, model.Session{Current: t})
	}
	if err := rows.Err(); err != nil {
		return nil, r.wrap("read turns that moved on", err)
	}
	return out, nil
}
