package ledger

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// DueActions lists actions to deliver now: pending ones whose next attempt
// has come, and claims older than claimTTL (their holder crashed or hung;
// its request has landed or died by now).
func (s *Store) DueActions(ctx context.Context, now time.Time, claimTTL time.Duration) ([]model.Due, error) {
	cols := blanked(prefixed("a.", actionCols), "a.body") + ", " + blanked(prefixed("e.", episodeCols), "e.finding")
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT `+cols+`
	  FROM actions a JOIN episodes e ON e.id = a.episode_id
	  WHERE (a.state = 'pending' AND a.next_attempt_us <= ?) OR (a.state = 'claimed' AND a.claimed_us <= ?)
	  ORDER BY a.created_us, e.since_us, a.step, a.repeat_no, a.key`), us(now), us(now.Add(-claimTTL)))
	if err != nil {
		return nil, s.wrap("list due actions", err)
	}
	var out []model.Due
	for rows.Next() {
		var a actionRow
		var e episodeRow
		if err := rows.Scan(append(a.dest(), e.dest()...)...); err != nil {
			_ = rows.Close()
			return nil, s.wrap("list due actions", err)
		}
		out = append(out, model.Due{Action: a.action(), Episode: e.episode()})
	}
	return out, s.wrap("list due actions", closeRows(rows))
}

// DueAction is the action with key when it is due now (as DueActions
// would list it): a click delivered the moment it is saved, rather than at
// the next cycle. ok is false when it is not due (settled, held by another
// process, waiting for a retry) or not there.
func (s *Store) DueAction(ctx context.Context, key string, now time.Time, claimTTL time.Duration) (model.Due, bool, error) {
	cols := blanked(prefixed("a.", actionCols), "a.body") + ", " + blanked(prefixed("e.", episodeCols), "e.finding")
	var a actionRow
	var e episodeRow
	err := s.db.QueryRowContext(ctx, s.q(`SELECT `+cols+`
	  FROM actions a JOIN episodes e ON e.id = a.episode_id
	  WHERE a.key = ? AND ((a.state = 'pending' AND a.next_attempt_us <= ?) OR (a.state = 'claimed' AND a.claimed_us <= ?))`),
		key, us(now), us(now.Add(-claimTTL))).Scan(append(a.dest(), e.dest()...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return model.Due{}, false, nil
	}
	if err != nil {
		return model.Due{}, false, s.wrap("read due action", err)
	}
	return model.Due{Action: a.action(), Episode: e.episode()}, true, nil
}

// prefixed qualifies a column list with a table alias.
func prefixed(p, cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// blanked selects an empty string in place of column col of a prefixed
// column list.
func blanked(cols, col string) string {
	parts := strings.Split(cols, ", ")
	for i, c := range parts {
		if c == col {
			parts[i] = "''"
		}
	}
	return strings.Join(parts, ", ")
}

// Claim takes an action for delivery by compare-and-set: exactly one of any
// number of concurrent claimers changes the row. ok is false when another
// process holds it, delivered it, or it is not due.
func (s *Store) Claim(ctx context.Context, key, holder, token string, now time.Time, claimTTL time.Duration) (model.Claim, bool, error) {
	res, err := s.db.ExecContext(ctx, s.q(`UPDATE actions SET
	    uncertain = CASE WHEN state = 'claimed' THEN 1 ELSE uncertain END,
	    state = 'claimed', claim_token = ?, claimed_by = ?, claimed_us = ?, attempts = attempts + 1, updated_us = ?
	  WHERE key = ? AND ((state = 'pending' AND next_attempt_us <= ?) OR (state = 'claimed' AND claimed_us <= ?))`),
		token, holder, us(now), us(now), key, us(now), us(now.Add(-claimTTL)))
	if err != nil {
		return model.Claim{}, false, s.wrap("claim action", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return model.Claim{}, false, s.wrap("claim action", err)
	}
	a, err := s.Action(ctx, key)
	if err != nil {
		return model.Claim{}, false, err
	}
	if a.ClaimToken != token {
		return model.Claim{}, false, nil // taken over in between: not ours
	}
	return model.Claim{Action: a, Takeover: a.Uncertain}, true, nil
}

// ErrLostClaim means the claim was taken over before it settled: the other
// holder settles the action (from evidence, if this attempt landed).
var ErrLostClaim = errors.New("claim was taken over")

// Settle records a claimed action's outcome, only while the claim is ours.
func (s *Store) Settle(ctx context.Context, key, token string, o model.Outcome, now time.Time) error {
	uncertain := 0
	if o.Uncertain {
		uncertain = 1
	}
	refund := 0
	if o.Refund {
		refund = 1
	}
	res, err := s.db.ExecContext(ctx, s.q(`UPDATE actions SET state = ?, result_channel = ?, result_ts = ?, error = ?,
	    next_attempt_us = ?, uncertain = CASE WHEN ? = 1 THEN 1 WHEN ? = 'pending' THEN uncertain ELSE 0 END,
	    attempts = attempts - ?, claim_token = '', updated_us = ?
	  WHERE key = ? AND claim_token = ? AND state = 'claimed'`),
		o.State, o.ResultChannel, o.ResultTS, o.Error, us(o.NextAttempt), uncertain, o.State, refund, us(now), key, token)
	if err != nil {
		return s.wrap("settle action", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.wrap("settle action", err)
	}
	if n != 1 {
		return ErrLostClaim
	}
	return nil
}

// Action reads one action.
func (s *Store) Action(ctx context.Context, key string) (model.Action, error) {
	a, err := scanAction(s.db.QueryRowContext(ctx, s.q("SELECT "+actionCols+" FROM actions WHERE key = ?"), key))
	if err != nil {
		return model.Action{}, s.wrap("read action", err)
	}
	return a, nil
}

// GateUntil is when a Slack channel reopens after a 429 (zero: open).
func (s *Store) GateUntil(ctx context.Context, channel string) (time.Time, error) {
	var until int64
	err := s.db.QueryRowContext(ctx, s.q("SELECT until_us FROM channel_gates WHERE channel = ?"), channel).Scan(&until)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, s.wrap("read channel gate", err)
	}
	return fromUS(until), nil
}

// CloseGate keeps a channel closed until until (never shortening a gate).
func (s *Store) CloseGate(ctx context.Context, channel string, until time.Time) error {
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO channel_gates (channel, until_us) VALUES (?, ?)
	  ON CONFLICT (channel) DO UPDATE SET until_us = CASE WHEN excluded.until_us > channel_gates.until_us THEN excluded.until_us ELSE channel_gates.until_us END`),
		channel, us(until))
	return s.wrap("close channel gate", err)
}
