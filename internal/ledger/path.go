package ledger

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/watchdogd/watchdogd/internal/dburl"
)

// CheckPath refuses, before anything is opened or made, a SQLite ledger
// that cannot be created where url says: a directory given as the file,
// a path through a file, or a file that does not exist yet in a directory
// this process may not write (SQLite makes the file, its -wal and -shm
// beside it; Open makes the directories missing on the way). A daemon
// started so would only fail every cycle. A ledger file that exists is
// left to Open: a volume remounted read-only under a daemon is an outage
// it rides out. Other URLs (PostgreSQL) pass.
func CheckPath(url string) error {
	target, err := dburl.Parse(url)
	if err != nil {
		return fmt.Errorf("state.url: %w", err)
	}
	if target.Kind != dburl.SQLite {
		return nil
	}
	name, path := dburl.Redact(url), target.Path
	switch fi, err := os.Stat(path); {
	case err == nil && fi.IsDir():
		return fmt.Errorf("ledger %s: %s is a directory; name the ledger's file in it: sqlite://%s", name, path, filepath.Join(path, "state.db"))
	case err == nil:
		return nil
	case !absent(err):
		return fmt.Errorf("ledger %s: %w", name, err)
	}
	dir := filepath.Dir(path)
	for {
		fi, err := os.Stat(dir)
		if err == nil && !fi.IsDir() {
			return fmt.Errorf("ledger %s: %s is a file, not a directory the ledger can be made in", name, dir)
		}
		if err == nil {
			break
		}
		if !absent(err) {
			return fmt.Errorf("ledger %s: %w", name, err)
		}
		if up := filepath.Dir(dir); up != dir {
			dir = up
			continue
		}
		break
	}
	if err := syscall.Access(dir, 0x2|0x1); err != nil { // W_OK|X_OK
		return fmt.Errorf("ledger %s: cannot create it: directory %s is not writable by uid %d (%w); point state.url at a writable volume or make %s writable by uid %d",
			name, dir, os.Geteuid(), err, dir, os.Geteuid())
	}
	return nil
}

// absent says a path is not there: missing, or below a file.
func absent(err error) bool { return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) }
