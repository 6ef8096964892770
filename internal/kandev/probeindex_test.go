package kandev_test

import (
	"context"
	"strings"
	"testing"

	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

// TestProbeIndexPrefersCompletedAt: on SQLite the probes name kandev's
// (task_session_id, started_at, completed_at) index where its analytics
// store has made one, whichever was created first, else the
// (task_session_id, started_at) one, else none; and the snapshot is the
// same on each.
func TestProbeIndexPrefersCompletedAt(t *testing.T) {
	ctx := context.Background()
	db := load(t, dialects[0], sessionsDataset(3), kandevdb.Options{}).(*kandevdb.SQLite)
	steps := []struct {
		ddl, want string // want "" means no INDEXED BY at all
	}{
		{"", "idx_turns_session_times"}, // kandev's order: the analytics index last
		{"DROP INDEX idx_turns_session_started; CREATE INDEX idx_turns_session_started ON task_session_turns(task_session_id, started_at)", "idx_turns_session_times"},
		{"DROP INDEX idx_turns_session_times", "idx_turns_session_started"},
		{"DROP INDEX idx_turns_session_started", ""},
	}
	for _, st := range steps {
		if st.ddl != "" {
			if _, err := db.DB().ExecContext(ctx, st.ddl); err != nil {
				t.Fatal(err)
			}
		}
		r, err := kandev.Open(ctx, db.URL(), kandev.Options{})
		if err != nil {
			t.Fatal(err)
		}
		sessions, _ := r.Statements()
		snap, err := r.Snapshot(ctx)
		_ = r.Close()
		if err != nil {
			t.Fatalf("after %q: %v", st.ddl, err)
		}
		named := strings.Contains(sessions, `INDEXED BY "`+st.want+`"`)
		if st.want == "" {
			named = !strings.Contains(sessions, "INDEXED BY")
		}
		if !named {
			t.Errorf("after %q the probes do not name %q:\n%s", st.ddl, st.want, sessions)
		}
		for _, s := range snap.Sessions {
			if s.Current == nil || !strings.HasSuffix(s.Current.ID, "-b") {
				t.Errorf("after %q: session %s current %+v", st.ddl, s.ID, s.Current)
			}
		}
		if len(snap.Sessions) != 3 {
			t.Errorf("after %q: %d sessions", st.ddl, len(snap.Sessions))
		}
	}
}
