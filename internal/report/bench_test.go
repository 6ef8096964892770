package report

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// busyMonth is a busy install's 30 days: n episodes over 5,000 sessions in
// 200 workspaces, each of a random kind, opened at a random time, most
// resolved within hours, some still open.
func busyMonth(n int) []Episode {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]Episode, n)
	for i := range out {
		opened := t0.Add(-time.Duration(rng.Int64N(int64(30 * 24 * time.Hour))))
		s := rng.IntN(5000)
		e := Episode{Kind: model.Kinds[rng.IntN(len(model.Kinds))], SessionID: fmt.Sprintf("s%d", s), TaskID: fmt.Sprintf("t%d", s/2),
			TaskTitle: "A task title of a usual length", WorkspaceID: fmt.Sprintf("ws%d", s%200),
			Since: opened.Add(-15 * time.Minute), Opened: opened}
		if rng.IntN(20) > 0 {
			e.Resolved, e.Cleared = opened.Add(time.Duration(rng.Int64N(int64(6*time.Hour)))), model.ClearedTurnCompleted
			if e.Resolved.After(t0) {
				e.Resolved, e.Cleared = time.Time{}, ""
			}
		}
		out[i] = e
	}
	return out
}

// BenchmarkCompute: a 30-day report of 50,000 episodes, as GET
// /api/v1/report?since=30d computes it once per cycle.
func BenchmarkCompute(b *testing.B) {
	eps := busyMonth(50000)
	in := Input{Episodes: eps, From: t0.Add(-30 * 24 * time.Hour), Until: t0, Now: t0, Retention: 720 * time.Hour}
	b.ReportAllocs()
	for b.Loop() {
		Compute(in)
	}
}
