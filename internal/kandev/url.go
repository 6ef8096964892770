// Package kandev is watchdogd's read side of kandev: it opens kandev's
// database read-only, checks the schema it depends on, and takes one
// consistent snapshot per cycle with a fixed number of statements
// (written by internal/kandevsql). kandev's write side, the WebSocket API a
// nudge goes through, is internal/notify/kandevapi.
package kandev

import (
	"fmt"
	"path/filepath"

	"github.com/watchdogd/watchdogd/internal/dburl"
)

// DefaultURL is kandev's own default database: $KANDEV_HOME_DIR/data/kandev.db,
// else ~/.kandev/data/kandev.db.
func DefaultURL(getenv func(string) string) string {
	if home := getenv("KANDEV_HOME_DIR"); home != "" {
		return "sqlite://" + filepath.Join(home, "data", "kandev.db")
	}
	return "sqlite://~/.kandev/data/kandev.db"
}

// sqliteDSN builds modernc's read-only URI for a kandev file: mode=ro (never
// immutable=1: kandev writes the file in WAL mode and readers need -shm),
// a busy timeout, and query_only so that no statement on this connection can
// write even if mode=ro were lost.
func sqliteDSN(path string, busyTimeoutMS int) string {
	return fmt.Sprintf("file:%s?mode=ro&_pragma=busy_timeout(%d)&_pragma=query_only(1)&_pragma=temp_store(2)", dburl.EscapeSQLitePath(path), busyTimeoutMS)
}
