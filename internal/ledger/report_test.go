package ledger_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
)

// TestReportEpisodes: the read a report makes takes the episodes the
// window touches — open ones, and those resolved in it or after — and no
// others, with the columns the report reads (a long title cut), newest
// opened first, and says when it left some out.
func TestReportEpisodes(t *testing.T) {
	ctx := context.Background()
	for _, d := range dialects[:2] {
		t.Run(d.name, func(t *testing.T) {
			s := open(t, d.url(t))
			mk := func(id string, opened time.Duration) model.Episode {
				e := episodeOf(id, model.KindStalledTurn)
				e.OpenedAt, e.Since, e.WorkspaceID = t0.Add(opened), t0.Add(opened-time.Minute), "ws-"+id
				return e
			}
			long := mk("long", -3*time.Hour)
			long.TaskTitle = strings.Repeat("é", 500)
			openAll(t, s, mk("before", -50*time.Hour), mk("in", -2*time.Hour), long, mk("open", -time.Hour), mk("after", time.Hour))
			if err := resolveAll(s, t0.Add(-49*time.Hour), model.Because(model.ClearedTurnCompleted), "before"); err != nil {
				t.Fatal(err)
			}
			if err := resolveAll(s, t0.Add(-90*time.Minute), model.Because(model.ClearedAgentOutput), "in", "long"); err != nil {
				t.Fatal(err)
			}
			eps, truncated, err := s.ReportEpisodes(ctx, t0.Add(-24*time.Hour), t0, 10)
			if err != nil || truncated {
				t.Fatal(err, truncated)
			}
			var ids []string
			for _, e := range eps {
				ids = append(ids, e.WorkspaceID)
			}
			if strings.Join(ids, ",") != "ws-open,ws-in,ws-long" {
				t.Fatalf("read %v", ids)
			}
			if e := eps[1]; e.Kind != model.KindStalledTurn || e.Cleared != model.ClearedAgentOutput || e.SessionID != "s-in" || e.TaskID != "t1" ||
				!e.Since.Equal(t0.Add(-2*time.Hour-time.Minute)) || !e.Opened.Equal(t0.Add(-2*time.Hour)) || !e.Resolved.Equal(t0.Add(-90*time.Minute)) {
				t.Errorf("read %+v", e)
			}
			if got := eps[2].TaskTitle; got != strings.Repeat("é", 200) {
				t.Errorf("a long title read as %d characters", len([]rune(got)))
			}
			if !eps[0].Resolved.IsZero() || eps[0].Cleared != "" {
				t.Errorf("the open one: %+v", eps[0])
			}
			eps, truncated, err = s.ReportEpisodes(ctx, t0.Add(-24*time.Hour), t0, 2)
			if err != nil || !truncated || len(eps) != 2 || eps[1].WorkspaceID != "ws-in" {
				t.Fatalf("limited: %d %v %v", len(eps), truncated, err)
			}
		})
	}
}

// BenchmarkReportEpisodes: the read of a 30-day report of 50,000
// episodes, each with a finding of 3 kB (a question's text), as a busy
// install's ledger holds them.
func BenchmarkReportEpisodes(b *testing.B) {
	ctx := context.Background()
	for _, d := range dialects[:2] {
		b.Run(d.name, func(b *testing.B) {
			s := open(b, d.url(b))
			const n = 50000
			finding := `{"question":"` + strings.Repeat("x", 3000) + `"}`
			var es []model.Episode
			var ids []string
			for i := range n {
				e := episodeOf(fmt.Sprintf("e%05d", i), model.KindUnansweredClarification)
				e.OpenedAt = t0.Add(-time.Duration(i) * (30 * 24 * time.Hour / n))
				e.Since, e.Finding = e.OpenedAt.Add(-15*time.Minute), finding
				es = append(es, e)
				if i%20 != 0 {
					ids = append(ids, e.ID)
				}
			}
			for i := 0; i < n; i += 5000 {
				openAll(b, s, es[i:i+5000]...)
			}
			for i := 0; i < len(ids); i += 5000 {
				if err := resolveAll(s, t0, model.Because(model.ClearedAnswered), ids[i:min(len(ids), i+5000)]...); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				eps, _, err := s.ReportEpisodes(ctx, t0.Add(-30*24*time.Hour), t0.Add(time.Second), ledger.ReportLimit)
				if err != nil || len(eps) != n {
					b.Fatal(len(eps), err)
				}
			}
		})
	}
}
