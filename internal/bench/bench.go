// Package bench measures watchdogd's scan at scale, side by side with the
// least any scan must read (the floor) and with a hand-written per-session
// watchdog (the naive loop), on SQLite and on PostgreSQL over loopback TCP.
package bench

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// Size is one dataset size.
type Size struct {
	Name            string
	Sessions        int
	Active          float64
	TurnsPerSession int
	MessagesPerTurn int
}

// Sizes are the three: small, medium, large.
var Sizes = []Size{
	{"small", 1000, 0.2, 20, 5},
	{"medium", 10000, 0.2, 20, 5},
	{"large", 100000, 0.1, 10, 5},
}

// Result is one dialect × size row.
type Result struct {
	Dialect, Size                     string
	Sessions, Active, Turns, Messages int
	Scan, Floor, Naive                time.Duration
	// ScanHistory1 and ScanHistory2 are the scan of the dataset and of a
	// copy of it with the terminal history doubled, timed in interleaved
	// rounds: history2x compares the two, not the scan measured minutes
	// earlier beside the floor.
	ScanHistory1, ScanHistory2 time.Duration
	// Statements is the scan's two statements alone, run on the floor's
	// connection with their rows drained but not decoded: the SQL cost,
	// comparable with the floor, without the Go side of the scan.
	Statements time.Duration
	// FloorOpen is the floor plus D1's open-before-completed key: the
	// floor that also reads completed_at of every turn of each active
	// session, as any scan by the current-turn rule must.
	FloorOpen    time.Duration
	NaiveQueries int
	RSSMiB       float64
	// Network is measured on PostgreSQL only, when Config.RTT is set.
	Network *Network
}

// median runs f runs times after one warm-up and returns the median.
func median(runs int, f func() error) (time.Duration, error) {
	ds, err := interleaved(runs, f)
	if err != nil {
		return 0, err
	}
	return ds[0], nil
}

// interleaved warms each f up once, then times them in rounds (f1, f2, …,
// f1, f2, …) and returns each one's median. Figures that are compared with
// each other (the scan, its statements, the floor) are measured this way, so
// a disturbance on the machine — autovacuum, a checkpoint, another process —
// falls on all of them alike instead of on one block of runs.
func interleaved(runs int, fs ...func() error) ([]time.Duration, error) {
	for _, f := range fs {
		if err := f(); err != nil {
			return nil, err
		}
	}
	ds := make([][]time.Duration, len(fs))
	for range runs {
		for i, f := range fs {
			start := time.Now()
			if err := f(); err != nil {
				return nil, err
			}
			ds[i] = append(ds[i], time.Since(start))
		}
	}
	out := make([]time.Duration, len(fs))
	for i, d := range ds {
		slices.Sort(d)
		out[i] = d[len(d)/2]
	}
	return out, nil
}

// scanOnce is watchdogd's real code path: the snapshot and the findings.
func scanOnce(ctx context.Context, r *kandev.Reader) (int, error) {
	snap, err := r.Snapshot(ctx)
	if err != nil {
		return 0, err
	}
	rep := scan.Findings(snap, scan.Options{Thresholds: scan.DefaultThresholds(), KandevRule: scan.RulePreSpec, BaseURL: "http://kandev"}, time.Now())
	return len(rep.Sessions), nil
}

const active = `('CREATED', 'STARTING', 'RUNNING', 'IDLE', 'WAITING_FOR_INPUT')`

// floorQuery starts from the active sessions and reads each one's newest
// turn (an index probe on (task_session_id, started_at)) and the newest
// update among that turn's messages: the least any scan must read.
//
// With open set it also counts each session's open turns, which makes it
// the least a scan by the rule must read on kandev's indexes: D1's
// first key (open before completed) needs completed_at of every turn of
// the session, which only kandev's analytics index (task_session_id,
// started_at, completed_at) holds, so it is a walk over all of them, not a
// probe. The two are measured side by side so the report shows how much of
// the scan's budget that key alone takes.
func floorQuery(pg, open bool) string {
	count := ""
	if open {
		count = `, (SELECT COUNT(*) FROM task_session_turns o WHERE o.task_session_id = s.id AND o.completed_at IS NULL)`
	}
	if pg {
		return `SELECT s.id, t.id, (SELECT MAX(m.updated_at) FROM task_session_messages m WHERE m.turn_id = t.id)` + count + `
FROM task_sessions s LEFT JOIN LATERAL (SELECT tt.id FROM task_session_turns tt WHERE tt.task_session_id = s.id ORDER BY tt.started_at DESC LIMIT 1) t ON true
WHERE s.state IN ` + active
	}
	return `SELECT x.*, (SELECT MAX(m.updated_at) FROM task_session_messages m WHERE m.turn_id = x.tid)
FROM (SELECT s.id, (SELECT tt.id FROM task_session_turns tt WHERE tt.task_session_id = s.id ORDER BY tt.started_at DESC LIMIT 1) AS tid` + count + `
      FROM task_sessions s WHERE s.state IN ` + active + `) x`
}

// naiveOnce is the hand-written watchdog: list the active sessions, then
// three queries per session — its newest turn (ORDER BY started_at DESC
// LIMIT 1, which the rule corrects), that turn's last activity, and its
// pending questions. It returns how many queries it ran.
func naiveOnce(ctx context.Context, db *sql.DB, pg bool) (int, error) {
	p := func(q string) string {
		if pg {
			return q
		}
		return strings.ReplaceAll(q, "$1", "?")
	}
	rows, err := db.QueryContext(ctx, `SELECT id FROM task_sessions WHERE state IN `+active)
	if err != nil {
		return 0, err
	}
	var ids []string
	if err := eachRow(rows, func(vals []string) { ids = append(ids, vals[0]) }); err != nil {
		return 0, err
	}
	queries := 1
	for _, id := range ids {
		var turn string
		var completed sql.NullString
		err := db.QueryRowContext(ctx, p(`SELECT id, CAST(completed_at AS TEXT) FROM task_session_turns WHERE task_session_id = $1 ORDER BY started_at DESC LIMIT 1`), id).Scan(&turn, &completed)
		queries++
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return 0, err
		}
		var last sql.NullString
		if err := db.QueryRowContext(ctx, p(`SELECT CAST(MAX(updated_at) AS TEXT) FROM task_session_messages WHERE turn_id = $1`), turn).Scan(&last); err != nil {
			return 0, err
		}
		qrows, err := db.QueryContext(ctx, p(`SELECT id, metadata FROM task_session_messages WHERE turn_id = $1 AND type = 'clarification_request'`), turn)
		if err != nil {
			return 0, err
		}
		if err := eachRow(qrows, func([]sql.NullString) {}); err != nil {
			return 0, err
		}
		queries += 2
	}
	return queries, nil
}
