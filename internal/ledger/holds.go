package ledger

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// Hold records that an outlet must not send to a destination: a new hold,
// or an existing one's reason, end and failures replaced (it keeps when it
// began). A destination gone for good stays so: a breaker's hold written
// after it (another replica's) does not reopen it by its end.
func (s *Store) Hold(ctx context.Context, h model.Hold) error {
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO destination_holds (outlet, destination, reason, since_us, until_us, failures) VALUES (?, ?, ?, ?, ?, ?)
	  ON CONFLICT (outlet, destination) DO UPDATE SET reason = excluded.reason, until_us = excluded.until_us, failures = excluded.failures
	  WHERE destination_holds.until_us <> 0 OR excluded.until_us = 0`),
		h.Outlet, h.Destination, h.Reason, us(h.Since), us(h.Until), h.Failures)
	return s.wrap("hold a destination", err)
}

// Unhold ends a breaker's hold on an outlet's destination (it answered
// again); a destination gone for good stays held.
func (s *Store) Unhold(ctx context.Context, outlet, destination string) error {
	_, err := s.db.ExecContext(ctx, s.q("DELETE FROM destination_holds WHERE outlet = ? AND destination = ? AND until_us <> 0"), outlet, destination)
	return s.wrap("end a destination's hold", err)
}

// Probe takes the one probe of a breaker whose hold ended at or before
// now, by compare-and-set: exactly one of any number of processes moves
// its end to until (while the probe runs, every other waits) and is told
// true. A process that crashed mid-probe leaves the hold to end at until.
func (s *Store) Probe(ctx context.Context, outlet, destination string, now, until time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, s.q("UPDATE destination_holds SET until_us = ? WHERE outlet = ? AND destination = ? AND until_us <> 0 AND until_us <= ?"),
		us(until), outlet, destination, us(now))
	if err != nil {
		return false, s.wrap("take a breaker's probe", err)
	}
	n, err := res.RowsAffected()
	return n == 1, s.wrap("take a breaker's probe", err)
}

// HoldOf is the hold on an outlet's destination, and whether it holds at
// now. A breaker's hold past its end is returned too (zero when there is
// none), not holding: its lane sends one probe.
func (s *Store) HoldOf(ctx context.Context, outlet, destination string, now time.Time) (model.Hold, bool, error) {
	h := model.Hold{Outlet: outlet, Destination: destination}
	var since, until int64
	err := s.db.QueryRowContext(ctx, s.q("SELECT reason, since_us, until_us, failures FROM destination_holds WHERE outlet = ? AND destination = ?"),
		outlet, destination).Scan(&h.Reason, &since, &until, &h.Failures)
	if errors.Is(err, sql.ErrNoRows) {
		return model.Hold{}, false, nil
	}
	if err != nil {
		return model.Hold{}, false, s.wrap("read a destination's hold", err)
	}
	h.Since, h.Until = fromUS(since), fromUS(until)
	return h, h.Holds(now), nil
}

// Holds lists every hold that holds at now, by outlet and destination
// (a zero now: every hold, a breaker's past its end too).
func (s *Store) Holds(ctx context.Context, now time.Time) ([]model.Hold, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT outlet, destination, reason, since_us, until_us, failures FROM destination_holds ORDER BY outlet, destination")
	if err != nil {
		return nil, s.wrap("read destination holds", err)
	}
	var out []model.Hold
	for rows.Next() {
		var h model.Hold
		var since, until int64
		if err := rows.Scan(&h.Outlet, &h.Destination, &h.Reason, &since, &until, &h.Failures); err != nil {
			_ = rows.Close()
			return nil, s.wrap("read destination holds", err)
		}
		if h.Since, h.Until = fromUS(since), fromUS(until); now.IsZero() || h.Holds(now) {
			out = append(out, h)
		}
	}
	return out, s.wrap("read destination holds", closeRows(rows))
}

// Release ends the holds on an outlet's destinations but those in keep
// (nil: every one) and returns those it ended: an operator reopened them,
// or the config no longer names them (a webhook whose URL changed).
func (s *Store) Release(ctx context.Context, outlet string, keep []string) ([]model.Hold, error) {
	all, err := s.Holds(ctx, time.Time{})
	if err != nil {
		return nil, err
	}
	var ended []model.Hold
	for _, h := range all {
		if h.Outlet != outlet || slices.Contains(keep, h.Destination) {
			continue
		}
		if _, err := s.db.ExecContext(ctx, s.q("DELETE FROM destination_holds WHERE outlet = ? AND destination = ?"), h.Outlet, h.Destination); err != nil {
			return ended, s.wrap("release a destination's hold", err)
		}
		ended = append(ended, h)
	}
	return ended, nil
}

// Unsettled counts an episode's steps of kind to channel still owed:
// pending or in flight (a keyed outlet's resolve waits for them).
func (s *Store) Unsettled(ctx context.Context, episodeID string, kind model.ActionKind, channel string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM actions WHERE episode_id = ? AND action = ? AND channel = ?
	  AND seq LIKE 'step/%' AND state IN ('pending', 'claimed')`), episodeID, string(kind), channel).Scan(&n)
	return n, s.wrap("count an episode's unsettled steps", err)
}
