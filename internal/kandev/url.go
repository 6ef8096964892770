// Package kandev is watchdogd's read side of kandev: it opens kandev's
// database read-only, checks the schema it depends on, and takes one
// consistent snapshot per cycle with a fixed number of statements. It also
// holds the write side kandev offers for nudges, its WebSocket API.
package kandev

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/watchdogd/watchdogd/internal/authority"
)

// Target is a parsed database URL.
type Target struct {
	Dialect authority.Dialect
	// Path is the SQLite file (absolute or relative to the working directory).
	Path string
	// DSN is the PostgreSQL connection string as given (pgx syntax).
	DSN string
}

// ParseURL reads database.url: sqlite:///abs/path.db, sqlite://relative.db,
// or a postgres:// / postgresql:// URL.
func ParseURL(raw string) (Target, error) {
	switch {
	case strings.HasPrefix(raw, "sqlite://"):
		p := strings.TrimPrefix(raw, "sqlite://")
		if p == "" {
			return Target{}, errors.New("sqlite URL names no file (want sqlite:///abs/path.db or sqlite://relative/path.db)")
		}
		if strings.HasPrefix(p, "~/") {
			home, err := os.UserHomeDir()
			if err != nil {
				return Target{}, fmt.Errorf("expand ~ in sqlite URL: %w", err)
			}
			p = filepath.Join(home, p[2:])
		}
		return Target{Dialect: authority.SQLite, Path: p}, nil
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		return Target{Dialect: authority.Postgres, DSN: raw}, nil
	case raw == "":
		return Target{}, errors.New("empty database URL")
	}
	return Target{}, fmt.Errorf("database URL %q: want sqlite://PATH, postgres:// or postgresql://", Redact(raw))
}

// DefaultURL is kandev's own default database: $KANDEV_HOME_DIR/data/kandev.db,
// else ~/.kandev/data/kandev.db.
func DefaultURL(getenv func(string) string) string {
	if home := getenv("KANDEV_HOME_DIR"); home != "" {
		return "sqlite://" + filepath.Join(home, "data", "kandev.db")
	}
	return "sqlite://~/.kandev/data/kandev.db"
}

// Redact hides the password of a database URL so it can be logged.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		if strings.Contains(raw, "password") || strings.Contains(raw, "@") {
			return "<unparseable database URL>"
		}
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// sqliteDSN builds modernc's read-only URI for a kandev file: mode=ro (never
// immutable=1: kandev writes the file in WAL mode and readers need -shm),
// a busy timeout, and query_only so that no statement on this connection can
// write even if mode=ro were lost.
func sqliteDSN(path string, busyTimeoutMS int) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(path)
	return fmt.Sprintf("file:%s?mode=ro&_pragma=busy_timeout(%d)&_pragma=query_only(1)", esc, busyTimeoutMS)
}
