// Package dburl reads watchdogd's database URLs (kandev's database and the
// ledger use the same syntax) and keeps their passwords out of logs.
package dburl

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Kind is the database behind a URL.
type Kind int

const (
	// SQLite is a file.
	SQLite Kind = iota
	// Postgres is a PostgreSQL server.
	Postgres
)

// Target is a parsed database URL.
type Target struct {
	Kind Kind
	// Path is the SQLite file (absolute or relative to the working directory).
	Path string
	// DSN is the PostgreSQL connection string as given (pgx syntax).
	DSN string
}

// Parse reads sqlite:///abs/path.db, sqlite://relative.db (~/ expands), or a
// postgres:// / postgresql:// URL.
func Parse(raw string) (Target, error) {
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
		return Target{Kind: SQLite, Path: p}, nil
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		return Target{Kind: Postgres, DSN: raw}, nil
	case raw == "":
		return Target{}, errors.New("empty database URL")
	}
	return Target{}, fmt.Errorf("database URL %q: want sqlite://PATH, postgres:// or postgresql://", Redact(raw))
}

// Redact hides the password of a database URL so it can be logged.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		if strings.Contains(raw, "@") || strings.Contains(raw, "password") {
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

// RedactError replaces a connection string inside an error's text.
func RedactError(err error, dsn string) error {
	if err == nil || dsn == "" || !strings.Contains(err.Error(), dsn) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), dsn, Redact(dsn)))
}

// EscapeSQLitePath escapes a file path for an SQLite file: URI.
func EscapeSQLitePath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(path)
}
