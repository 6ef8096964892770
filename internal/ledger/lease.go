package ledger

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Lease is the leader lease row.
type Lease struct {
	Holder  string
	Term    int64
	Expires time.Time // by the database's clock
	// Now is the database's clock when the lease was read.
	Now time.Time
}

// Current reports whether the lease is held by anyone at its read time.
func (l Lease) Current() bool { return l.Holder != "" && l.Expires.After(l.Now) }

// dbNowUS is the database's clock in microseconds since the epoch: leases
// expire by one clock, whichever replica reads them.
func (s *Store) dbNowUS() string {
	if s.pg {
		return "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::bigint"
	}
	return "CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)"
}

// AcquireLease takes or renews the named lease for holder for ttl. held is
// false when another holder's lease is still current. The term grows each
// time the lease changes hands (or lapses and is taken again).
func (s *Store) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (Lease, bool, error) {
	now := s.dbNowUS()
	q := `INSERT INTO leases (name, holder, term, expires_us) VALUES (?, ?, 1, ` + now + ` + ?)
	  ON CONFLICT (name) DO UPDATE SET
	    term = CASE WHEN leases.holder = excluded.holder AND leases.expires_us > ` + now + ` THEN leases.term ELSE leases.term + 1 END,
	    holder = excluded.holder,
	    expires_us = excluded.expires_us
	  WHERE leases.holder = excluded.holder OR leases.expires_us <= ` + now + `
	  RETURNING holder, term, expires_us, ` + now
	var l Lease
	var exp, dbNow int64
	err := s.db.QueryRowContext(ctx, s.q(q), name, holder, ttl.Microseconds()).Scan(&l.Holder, &l.Term, &exp, &dbNow)
	if errors.Is(err, sql.ErrNoRows) {
		cur, err := s.ReadLease(ctx, name)
		return cur, false, err
	}
	if err != nil {
		return Lease{}, false, s.wrap("acquire lease", err)
	}
	l.Expires, l.Now = fromUS(exp), fromUS(dbNow)
	return l, true, nil
}

// ReadLease reads the named lease (zero when none).
func (s *Store) ReadLease(ctx context.Context, name string) (Lease, error) {
	var l Lease
	var exp, dbNow int64
	err := s.db.QueryRowContext(ctx, s.q(`SELECT holder, term, expires_us, `+s.dbNowUS()+` FROM leases WHERE name = ?`), name).
		Scan(&l.Holder, &l.Term, &exp, &dbNow)
	if errors.Is(err, sql.ErrNoRows) {
		return Lease{}, nil
	}
	if err != nil {
		return Lease{}, s.wrap("read lease", err)
	}
	l.Expires, l.Now = fromUS(exp), fromUS(dbNow)
	return l, nil
}

// ReleaseLease gives the lease up at once (a clean shutdown), so a standby
// need not wait for it to expire.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string) error {
	_, err := s.db.ExecContext(ctx, s.q(`UPDATE leases SET expires_us = 0 WHERE name = ? AND holder = ?`), name, holder)
	return s.wrap("release lease", err)
}
