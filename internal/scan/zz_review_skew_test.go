package scan

import (
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// A restart 1 min ago written by CURRENT_TIMESTAMP on a PostgreSQL role at
// UTC-5 (America/New_York): updated_at is 5 h behind.
func TestReviewRestartAtNegativeOffset(t *testing.T) {
	m := time.Minute
	behind := ago(5*time.Hour + m)
	for _, started := range []time.Duration{40 * m, 6 * time.Hour} {
		tu := &model.Turn{StartedAt: ago(started), CompletedAt: ago(started), UpdatedAt: behind}
		got := RestartAt(tu, time.Time{})
		t.Logf("turn started %v ago: restart instant %v ago (true: 1m0s)", started, now.Sub(got))
		if now.Sub(got) > 5*m {
			t.Errorf("restart dated %v ago, it was 1 min ago", now.Sub(got))
		}
	}
}
