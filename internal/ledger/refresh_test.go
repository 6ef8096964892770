package ledger_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/ledger"
)

// manyEpisodes opens n episodes with distinct identities.
func manyEpisodes(t testing.TB, s *ledger.Store, n int) {
	t.Helper()
	var eps []ledger.Episode
	for i := range n {
		e := newEpisode(fmt.Sprintf("ep-%04d", i))
		e.Identity = fmt.Sprintf("stalled_turn|s%d|turn|", i)
		eps = append(eps, e)
	}
	if _, _, err := s.Decide(context.Background(), func(ledger.State) (ledger.Plan, error) {
		return ledger.Plan{Now: t0, Open: eps}, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// refreshAll refreshes every open episode as the scan would, each with its
// own title and finding.
func refreshAll(s *ledger.Store, now time.Time, title, finding func(id string) string) error {
	_, _, err := s.Decide(context.Background(), func(st ledger.State) (ledger.Plan, error) {
		p := ledger.Plan{Now: now}
		for _, e := range st.Open {
			p.Refresh = append(p.Refresh, ledger.Refresh{ID: e.ID, Kind: "shadowed_clarification", KindChanges: 1,
				TaskTitle: title(e.ID), LastSeen: now, Finding: finding(e.ID)})
		}
		return p, nil
	})
	return err
}

// TestRefreshManyEpisodes: refreshing more episodes than one statement
// carries updates each with its own values (titles with quotes, escapes,
// newlines and emoji intact), clears a missing mark, and leaves a
// resolved episode alone.
func TestRefreshManyEpisodes(t *testing.T) {
	ctx := context.Background()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			s := open(t, d.url(t))
			manyEpisodes(t, s, 2500)
			if _, _, err := s.Decide(ctx, func(ledger.State) (ledger.Plan, error) {
				return ledger.Plan{Now: t0, Missing: []ledger.Missing{{ID: "ep-0007", Since: t0}},
					Resolve: []ledger.Resolve{{ID: "ep-0042", At: t0, Reason: "answered"}}}, nil
			}); err != nil {
				t.Fatal(err)
			}
			title := func(id string) string { return id + ` "Fix" it's \n` + "\n\u00e9 \U0001F600 \\u0000" }
			finding := func(id string) string { return `{"kind":"shadowed_clarification","id":"` + id + `"}` }
			now := t0.Add(time.Minute)
			if err := refreshAll(s, now, title, finding); err != nil {
				t.Fatal(err)
			}
			eps, err := s.Episodes(ctx, false, 0)
			if err != nil || len(eps) != 2500 {
				t.Fatalf("%d episodes, %v", len(eps), err)
			}
			for _, e := range eps {
				if e.ID == "ep-0042" {
					if e.Kind != "stalled_turn" || e.TaskTitle != "Fix" || !e.LastSeen.Equal(t0) {
						t.Errorf("the resolved episode was refreshed: %+v", e)
					}
					continue
				}
				if e.Kind != "shadowed_clarification" || e.KindChanges != 1 || e.TaskTitle != title(e.ID) ||
					!e.LastSeen.Equal(now) || e.Finding != finding(e.ID) || !e.MissingSince.IsZero() {
					t.Fatalf("episode %s after the refresh: %+v", e.ID, e)
				}
			}
		})
	}
}

// TestRefreshLargeFindings: findings of hundreds of kilobytes each (long
// questions) go out over several statements, each updated intact.
func TestRefreshLargeFindings(t *testing.T) {
	ctx := context.Background()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			s := open(t, d.url(t))
			manyEpisodes(t, s, 5)
			big := func(id string) string { return `{"id":"` + id + `","prompt":"` + strings.Repeat(id, 100_000) + `"}` }
			if err := refreshAll(s, t0, func(string) string { return "Fix" }, big); err != nil {
				t.Fatal(err)
			}
			eps, err := s.Episodes(ctx, true, 0)
			if err != nil || len(eps) != 5 {
				t.Fatalf("%d episodes, %v", len(eps), err)
			}
			for _, e := range eps {
				if e.Finding != big(e.ID) {
					t.Errorf("episode %s has a finding of %d bytes, want its own %d", e.ID, len(e.Finding), len(big(e.ID)))
				}
			}
		})
	}
}

// BenchmarkRefresh: one decision that refreshes 2,000 open episodes, as
// every cycle does while they stay open. 2026-11-30, 2 vCPU: PostgreSQL
// over loopback 162 ms with one statement per episode, 25 ms in batches
// (over a network each statement also pays a round trip); SQLite 22 ms
// with a statement parsed per episode, 14 ms prepared once.
func BenchmarkRefresh(b *testing.B) {
	for _, d := range dialects {
		b.Run(d.name, func(b *testing.B) {
			s := open(b, d.url(b))
			manyEpisodes(b, s, 2000)
			fixed := func(string) string { return "Fix" }
			finding := func(id string) string { return `{"kind":"shadowed_clarification","id":"` + id + `"}` }
			b.ResetTimer()
			for i := range b.N {
				if err := refreshAll(s, t0.Add(time.Duration(i+1)*time.Minute), fixed, finding); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// longOpenEpisodes opens n episodes that have each been repeated for days:
// a first post (its frozen body about 3 KB) and replies-1 thread replies
// (about 1 KB each), the way an unanswered question repeated every hour
// piles up actions.
func longOpenEpisodes(t testing.TB, s *ledger.Store, n, replies int) {
	t.Helper()
	manyEpisodes(t, s, n)
	first, reply := `{"text":"`+strings.Repeat("f", 3000)+`"}`, `{"text":"`+strings.Repeat("r", 1000)+`"}`
	var acts []ledger.Action
	for i := range n {
		ep := fmt.Sprintf("ep-%04d", i)
		acts = append(acts, ledger.Action{Key: ep + "-post", EpisodeID: ep, Seq: "step/x/0/0", Kind: ledger.KindSlack, Channel: "C1", Digest: "d",
			Body: first, CreatedAt: t0, NextAttempt: t0})
		for r := 1; r < replies; r++ {
			acts = append(acts, ledger.Action{Key: fmt.Sprintf("%s-r%d", ep, r), EpisodeID: ep, Seq: fmt.Sprintf("step/x/0/%d", r), Repeat: r,
				Kind: ledger.KindSlack, Channel: "C1", ParentKey: ep + "-post", Digest: "d", Body: reply, CreatedAt: t0, NextAttempt: t0})
		}
	}
	if _, _, err := s.Decide(context.Background(), func(ledger.State) (ledger.Plan, error) {
		return ledger.Plan{Now: t0, Actions: acts}, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestOpenStateLeavesRepliesOut: what a decision loads of the open
// episodes carries the frozen body of each post that went to the top of the
// channel (a resolve edit starts from it: the first post, or, when that
// failed, the steps posted in its place) and of no other action, so that
// the memory a cycle needs does not grow with every hourly repeat of every
// long-open episode.
func TestOpenStateLeavesRepliesOut(t *testing.T) {
	ctx := context.Background()
	for _, d := range dialects[:2] {
		t.Run(d.name, func(t *testing.T) {
			s := open(t, d.url(t))
			longOpenEpisodes(t, s, 3, 5)
			// ep-0000's first post failed for good: its steps went top-level.
			if _, ok, err := s.Claim(ctx, "ep-0000-post", "test", "tok", t0, time.Minute); !ok || err != nil {
				t.Fatalf("claim: %v %v", ok, err)
			}
			if err := s.Settle(ctx, "ep-0000-post", "tok", ledger.Outcome{State: ledger.StateFailed, Error: "channel_not_found"}, t0); err != nil {
				t.Fatal(err)
			}
			st, err := s.Peek(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Open) != 3 {
				t.Fatalf("%d open episodes", len(st.Open))
			}
			for _, e := range st.Open {
				if len(e.Actions) != 5 {
					t.Fatalf("%s: %d actions", e.ID, len(e.Actions))
				}
				for _, a := range e.Actions {
					topLevel := a.ParentKey == "" || e.ID == "ep-0000"
					if loaded := a.Body != ""; loaded != topLevel {
						t.Errorf("%s: body loaded %v, top-level post %v", a.Key, loaded, topLevel)
					}
				}
			}
			// Delivery still reads every body it sends.
			due, err := s.DueActions(ctx, t0, time.Minute)
			if err != nil || len(due) != 14 {
				t.Fatalf("due: %d %v", len(due), err)
			}
			for _, a := range due {
				if a.Body == "" {
					t.Errorf("%s is due without its body", a.Key)
				}
			}
		})
	}
}

// BenchmarkOpenState: loading 500 open episodes that have each been
// repeated 100 times, as every decision does. 2026-11-30, 2 vCPU: 154 MB
// allocated per load with every body, 103 MB with top-level posts' only
// (SQLite 0.32 s → 0.25 s, PostgreSQL 0.22 s → 0.15–0.19 s).
func BenchmarkOpenState(b *testing.B) {
	for _, d := range dialects[:2] {
		b.Run(d.name, func(b *testing.B) {
			s := open(b, d.url(b))
			longOpenEpisodes(b, s, 500, 100)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := s.Peek(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
