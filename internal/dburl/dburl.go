// Package dburl reads watchdogd's database URLs (kandev's database and the
// ledger use the same syntax) and keeps their passwords out of logs.
package dburl

import (
	"errors"
	"fmt"
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
// postgres:// / postgresql:// URL. A URL it cannot read is not quoted in
// the error: a misspelt scheme ("postgres:/…") leaves the password in it.
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
	case isPostgres(raw):
		return Target{Kind: Postgres, DSN: raw}, nil
	case raw == "":
		return Target{}, errors.New("empty database URL")
	}
	return Target{}, errors.New("database URL: want sqlite://PATH, postgres:// or postgresql:// (the URL is not printed: it may hold a password)")
}

func isPostgres(raw string) bool {
	return strings.HasPrefix(raw, "postgres://") || strings.HasPrefix(raw, "postgresql://")
}

// EscapeSQLitePath escapes a file path for an SQLite file: URI.
func EscapeSQLitePath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(path)
}
