package ledger

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
)

// checkPostgres refuses, before anything is written, a PostgreSQL the
// ledger cannot work on, naming why: a read-only one (a hot standby, or
// default_transaction_read_only on the role or the database) would fail
// at its first write with a bare SQLSTATE; a pooler in transaction
// pooling would start, then fail every cycle (see probePooling).
func (s *Store) checkPostgres(ctx context.Context) error {
	var recovery bool
	var readOnly string
	if err := s.db.QueryRowContext(ctx, "SELECT pg_is_in_recovery(), current_setting('transaction_read_only')").Scan(&recovery, &readOnly); err != nil {
		return fmt.Errorf("ledger %s: %w", s.name, err)
	}
	switch {
	case recovery:
		return fmt.Errorf("ledger %s: the server is a standby (in recovery), and watchdogd writes its ledger: point state.url at the primary", s.name)
	case readOnly == "on":
		return fmt.Errorf("ledger %s: transactions are read-only there (default_transaction_read_only on the role or the database), and watchdogd writes its ledger", s.name)
	}
	return s.probePooling(ctx)
}

// probePooling sets a placeholder setting of its own on one connection
// and looks for it from a second, opened meanwhile. Only a pooler that
// hands one client's server session to another between transactions,
// without resetting it, shows it: transaction pooling, where the
// migrations' session lock, the cached statements and the search_path set
// per connection do not hold, and every cycle would fail. An idle server
// connection is reused most recently used first, so the second client
// gets the first one's; a pooler that hands it another lets the ledger
// start, as it did before the probe.
func (s *Store) probePooling(ctx context.Context) error {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	token := hex.EncodeToString(b)
	first, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("ledger %s: %w", s.name, err)
	}
	defer func() { _ = first.Close() }()
	if _, err := first.ExecContext(ctx, "SELECT set_config('watchdogd.pool_probe', $1, false)", token); err != nil {
		return fmt.Errorf("ledger %s: probe the connection: %w", s.name, err)
	}
	second, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("ledger %s: %w", s.name, err)
	}
	defer func() { _ = second.Close() }()
	var seen sql.NullString
	if err := second.QueryRowContext(ctx, "SELECT current_setting('watchdogd.pool_probe', true)").Scan(&seen); err != nil {
		return fmt.Errorf("ledger %s: probe the connection: %w", s.name, err)
	}
	if seen.String != token {
		_, _ = first.ExecContext(ctx, "RESET watchdogd.pool_probe")
		return nil
	}
	_, _ = second.ExecContext(ctx, "RESET watchdogd.pool_probe")
	return fmt.Errorf("ledger %s: two of its connections shared one server session: a pooler in transaction pooling (PgBouncer's pool_mode = transaction) cannot serve the ledger; connect directly or through session pooling", s.name)
}
