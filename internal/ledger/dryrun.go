package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/watchdogd/watchdogd/internal/dburl"
)

// OpenCopy opens, for a dry run, a copy of the SQLite ledger at url in a
// directory of its own: deciding from it then writes nothing where url
// points (not the file, not a file beside it, no migration), and a ledger
// not made yet is an empty one rather than one made by the dry run. The
// copy is read through a read-only connection (VACUUM INTO: one
// consistent snapshot, while a daemon writes the ledger). Close removes
// it. Other URLs are opened as Open does.
func OpenCopy(ctx context.Context, url string) (*Store, error) {
	target, err := dburl.Parse(url)
	if err != nil {
		return nil, fmt.Errorf("state.url: %w", err)
	}
	if target.Kind != dburl.SQLite {
		return Open(ctx, url)
	}
	name := dburl.Redact(url)
	dir, err := os.MkdirTemp("", "watchdogd-dry-run-")
	if err != nil {
		return nil, fmt.Errorf("ledger %s: a directory for the dry run's copy: %w", name, err)
	}
	copyPath := filepath.Join(dir, "state.db")
	if err := snapshotTo(ctx, target.Path, copyPath); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("ledger %s: copy for the dry run: %w", name, err)
	}
	s, err := Open(ctx, "sqlite://"+copyPath)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("ledger %s: the dry run's copy: %w", name, err)
	}
	s.name, s.cleanup = name, func() { _ = os.RemoveAll(dir) }
	return s, nil
}

// snapshotTo writes a copy of the SQLite file at from to to, reading from
// through a read-only connection; a file that does not exist is copied as
// nothing (Open then makes an empty ledger at to).
func snapshotTo(ctx context.Context, from, to string) error {
	if _, err := os.Stat(from); errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	params := "mode=ro&_pragma=busy_timeout(10000)"
	if _, err := os.Stat(from + "-wal"); errors.Is(err, os.ErrNotExist) {
		// No process has the ledger open (SQLite removes the -wal with
		// the last connection), so the file holds all of it: read it as
		// it is, without the -wal and -shm a WAL reader makes beside it.
		params += "&immutable=1"
	}
	db, err := sql.Open("sqlite", "file:"+dburl.EscapeSQLitePath(from)+"?"+params)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	_, err = db.ExecContext(ctx, `VACUUM INTO ?`, to)
	return err
}
