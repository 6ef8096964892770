package ledger

import (
	"context"
	"database/sql"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/report"
)

// ReportLimit bounds the episodes one report reads: 30 days of a busy
// install are tens of thousands; past this many the oldest are left out,
// and the report says so (report.Covers).
const ReportLimit = 200000

// maxReportTitle bounds a task title as a report reads it.
const maxReportTitle = 200

// ReportEpisodes reads, in one statement, the episodes a report over
// [from, until) needs: those opened before until and open, or resolved at
// or after from; newest opened first, at most limit (truncated says there
// were more). It reads only what report.Compute reads: kind, cleared,
// session, task and its title (cut to 200 characters), workspace, since,
// opened, resolved.
func (s *Store) ReportEpisodes(ctx context.Context, from, until time.Time, limit int) (eps []report.Episode, truncated bool, err error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT kind, cleared, session_id, task_id, workspace_id, substr(task_title, 1, ?),
	    since_us, opened_us, resolved_us
	  FROM episodes WHERE opened_us < ? AND (resolved_us IS NULL OR resolved_us >= ?)
	  ORDER BY opened_us DESC LIMIT ?`), maxReportTitle, us(until), us(from), limit+1)
	if err != nil {
		return nil, false, s.wrap("read episodes for a report", err)
	}
	// Held once: a session's ids, its task's title, the kinds and codes
	// (read as bytes, a value seen before costs no allocation).
	seen := map[string]string{}
	once := func(b sql.RawBytes) string {
		if v, ok := seen[string(b)]; ok {
			return v
		}
		v := string(b)
		seen[v] = v
		return v
	}
	var raw [6]sql.RawBytes
	for rows.Next() {
		var since, opened int64
		var resolved sql.NullInt64
		if err := rows.Scan(&raw[0], &raw[1], &raw[2], &raw[3], &raw[4], &raw[5], &since, &opened, &resolved); err != nil {
			_ = rows.Close()
			return nil, false, s.wrap("read episodes for a report", err)
		}
		eps = append(eps, report.Episode{Kind: model.Kind(once(raw[0])), Cleared: model.Cleared(once(raw[1])),
			SessionID: once(raw[2]), TaskID: once(raw[3]), WorkspaceID: once(raw[4]), TaskTitle: once(raw[5]),
			Since: fromUS(since), Opened: fromUS(opened), Resolved: fromNullUS(resolved)})
	}
	if err := closeRows(rows); err != nil {
		return nil, false, s.wrap("read episodes for a report", err)
	}
	if len(eps) > limit {
		return eps[:limit], true, nil
	}
	return eps, false, nil
}
