package ledger

import (
	"context"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// EpisodesSentTo lists the episodes an outlet heard of — a step of action
// kind went out, or may have — that are open, or resolved at or after
// resolvedSince; without their actions. An outlet whose receiver forgets
// what it stops hearing about (Alertmanager) sends them all again from
// this, statelessly.
func (s *Store) EpisodesSentTo(ctx context.Context, kind model.ActionKind, resolvedSince time.Time) ([]model.Episode, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT `+episodeCols+` FROM episodes e
WHERE (e.resolved_us IS NULL OR e.resolved_us >= ?) AND EXISTS (SELECT 1 FROM actions a
  WHERE a.episode_id = e.id AND a.action = ? AND `+sentStep+`)
ORDER BY e.opened_us, e.id`), us(resolvedSince), string(kind))
	if err != nil {
		return nil, s.wrap("list episodes sent to "+string(kind), err)
	}
	var out []model.Episode
	err = scanEpisodes(rows, func(e model.Episode) { out = append(out, e) })
	return out, s.wrap("list episodes sent to "+string(kind), err)
}
