package kandev_test

import (
	"slices"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
)

// TestUnparseableTimestampsNamed: each timestamp in no shape kandev writes
// is read as missing and listed by its row, so that an operator can repair
// it; the newest agent update, which the statement returns without its id,
// by its turn. On SQLite a TIMESTAMP column holds any text; on PostgreSQL
// the only such values are infinity and -infinity.
func TestUnparseableTimestampsNamed(t *testing.T) {
	// bad is a value Go's parser refuses; newest, one that is also the
	// turn's newest update as the database orders them (julianday reads
	// this shape on SQLite).
	bad := map[string]string{"sqlite": "yesterday", "postgres": "-infinity"}
	newest := map[string]string{"sqlite": "2026-11-29 11:58", "postgres": "infinity"}
	for _, dc := range dialects {
		t.Run(dc.name, func(t *testing.T) {
			b := kandevdb.NewBuilder(now)
			s := b.Session("s", "task", "ws", "RUNNING", time.Hour, "")
			s.Turn("cur", 30*time.Minute, -1, "").Clarification("p", "q", "T", "P", nil, "pending", 20*time.Minute, nil).Agent("tool_call", 10*time.Minute)
			question, update := b.DS.Messages[0].ID, b.DS.Messages[1].ID
			db := load(t, dc, b.DS, kandevdb.Options{})
			for _, q := range []string{
				"UPDATE task_sessions SET started_at = '" + bad[dc.name] + "'",
				"UPDATE task_session_turns SET started_at = '" + bad[dc.name] + "'",
				"UPDATE task_session_messages SET created_at = '" + bad[dc.name] + "' WHERE id = '" + question + "'",
				"UPDATE task_session_messages SET updated_at = '" + newest[dc.name] + "' WHERE id = '" + update + "'",
			} {
				execute(t, db, q)
			}
			snap := snapshot(t, db.URL(), kandev.Options{})
			want := []model.RowRef{
				{Table: "task_sessions", ID: "s"},
				{Table: "task_session_turns", ID: "cur"},
				{Table: "task_session_messages", Of: "newest update, turn cur"},
				{Table: "task_session_messages", ID: question},
			}
			if !slices.Equal(snap.Unparseable, want) {
				t.Errorf("unparseable timestamps in %v, want %v", snap.Unparseable, want)
			}
			if c := snap.Sessions[0].Current; c == nil || c.ID != "cur" || !c.StartedAt.IsZero() {
				t.Errorf("current turn %+v, want cur with no start", c)
			}
		})
	}
}

// execute runs one statement on a test database of either dialect.
