package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// MinEpisodePrefix is the fewest characters of an episode's id the
// operator commands take for it: its first block, as `git` takes a
// commit's.
const MinEpisodePrefix = 8

// ErrNoEpisode is EpisodeID's answer for an id nothing starts with.
var ErrNoEpisode = errors.New("no such episode")

// EpisodeID is the episode whose id is id, or the one episode whose id
// starts with it when it has MinEpisodePrefix characters or more. A
// prefix more than one id starts with is an error naming them.
func (s *Store) EpisodeID(ctx context.Context, id string) (string, error) {
	var exact string
	err := s.db.QueryRowContext(ctx, s.q("SELECT id FROM episodes WHERE id = ?"), id).Scan(&exact)
	switch {
	case err == nil:
		return exact, nil
	case !errors.Is(err, sql.ErrNoRows):
		return "", s.wrap("find episode "+id, err)
	case len(id) < MinEpisodePrefix:
		return "", fmt.Errorf("episode %q: %w (give its whole id, or at least its first %d characters)", id, ErrNoEpisode, MinEpisodePrefix)
	}
	// substr, not LIKE: SQLite's LIKE ignores ASCII case, and a prefix is
	// compared as it is, whatever it holds.
	rows, err := s.db.QueryContext(ctx, s.q("SELECT id FROM episodes WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 6"), len([]rune(id)), id)
	if err != nil {
		return "", s.wrap("find episode "+id, err)
	}
	var ids []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			_ = rows.Close()
			return "", s.wrap("find episode "+id, err)
		}
		ids = append(ids, v)
	}
	if err := closeRows(rows); err != nil {
		return "", s.wrap("find episode "+id, err)
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("episode %q: %w", id, ErrNoEpisode)
	case 1:
		return ids[0], nil
	}
	more := ""
	if len(ids) > 5 {
		ids, more = ids[:5], ", …"
	}
	return "", fmt.Errorf("episode %q is ambiguous: it starts %s%s (give more of the id)", id, strings.Join(ids, ", "), more)
}
