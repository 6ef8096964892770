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

// manyEpisodes opens n episodes with distinct identities.
func manyEpisodes(t testing.TB, s *ledger.Store, n int) {
	t.Helper()
	var eps []model.Episode
	for i := range n {
		e := newEpisode(fmt.Sprintf("ep-%04d", i))
		e.Identity = fmt.Sprintf("stalled_turn|s%d|turn|", i)
		eps = append(eps, e)
	}
	if _, _, err := s.Decide(context.Background(), func(model.Ledger) (model.Plan, error) {
		return model.Plan{Now: t0, Open: eps}, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// refreshAll refreshes every open episode as the scan would, each with its
// own title and finding.
func refreshAll(s *ledger.Store, now time.Time, title, finding func(id string) string) error {
	_, _, err := s.Decide(context.Background(), func(st model.Ledger) (model.Plan, error) {
		p := model.Plan{Now: now}
		for _, e := range st.Open {
			p.Refresh = append(p.Refresh, model.Refresh{ID: e.ID, Kind: "shadowed_clarification", KindChanges: 1,
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
			if _, _, err := s.Decide(ctx, func(model.Ledger) (model.Plan, error) {
				return model.Plan{Now: t0, Missing: []model.Missing{{ID: "ep-0007", Since: t0}},
					Resolve: []model.Resolve{{ID: "ep-0042", At: t0, Reason: model.Because(model.ClearedAnswered)}}}, nil
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
// piles up actions, every one delivered but the newest reply of the last
// episode, still pending.
func longOpenEpisodes(t testing.TB, s *ledger.Store, n, replies int) {
	t.Helper()
	ctx := context.Background()
	manyEpisodes(t, s, n)
	first, reply := `{"text":"`+strings.Repeat("f", 3000)+`"}`, `{"text":"`+strings.Repeat("r", 1000)+`"}`
	var acts []model.Action
	for i := range n {
		ep := fmt.Sprintf("ep-%04d", i)
		acts = append(acts, model.Action{Key: ep + "-post", EpisodeID: ep, Seq: "step/x/0/0", Kind: model.ActionSlack, Channel: "C1", Digest: "d",
			Body: first, CreatedAt: t0, NextAttempt: t0})
		for r := 1; r < replies; r++ {
			at := t0.Add(time.Duration(r) * time.Hour)
			acts = append(acts, model.Action{Key: fmt.Sprintf("%s-r%d", ep, r), EpisodeID: ep, Seq: fmt.Sprintf("step/x/0/%d", r), Repeat: r,
				Kind: model.ActionSlack, Channel: "C1", ParentKey: ep + "-post", Digest: "d", Body: reply, CreatedAt: at, NextAttempt: at})
		}
	}
	if _, _, err := s.Decide(ctx, func(model.Ledger) (model.Plan, error) {
		return model.Plan{Now: t0, Actions: acts}, nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, a := range acts[:len(acts)-1] {
		if _, ok, err := s.Claim(ctx, a.Key, "test", "tok", a.CreatedAt, time.Minute); !ok || err != nil {
			t.Fatalf("claim %s: %v %v", a.Key, ok, err)
		}
		if err := s.Settle(ctx, a.Key, "tok", model.Outcome{State: model.StateDelivered, ResultChannel: "C1", ResultTS: "1.1"}, a.CreatedAt); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpenStateLeavesHistoryOut: what a decision loads of an open episode
// that has been reminded for days is its first post, with the frozen body
// a resolve edit starts from, and its newest reminder (the newest step of
// its ladder, and the last one sent), without its body; a pending action
// too, without its body. Delivery still reads the body of what it sends.
func TestOpenStateLeavesHistoryOut(t *testing.T) {
	ctx := context.Background()
	for _, d := range dialects[:2] {
		t.Run(d.name, func(t *testing.T) {
			s := open(t, d.url(t))
			longOpenEpisodes(t, s, 3, 6)
			st, err := s.Peek(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]string{
				"ep-0000": {"ep-0000-post", "ep-0000-r5"},
				"ep-0001": {"ep-0001-post", "ep-0001-r5"},
				// The pending newest reply, and the newest one sent.
				"ep-0002": {"ep-0002-post", "ep-0002-r4", "ep-0002-r5"},
			}
			for _, e := range st.Open {
				var keys []string
				for _, a := range e.Actions {
					keys = append(keys, a.Key)
					if top := a.ParentKey == ""; top != (a.Body != "") {
						t.Errorf("%s: body loaded %v, top-level post %v", a.Key, a.Body != "", top)
					}
				}
				if fmt.Sprint(keys) != fmt.Sprint(want[e.ID]) {
					t.Errorf("%s: loaded %v, want %v", e.ID, keys, want[e.ID])
				}
			}
			// Due for delivery, it is listed without its text, which the
			// claim reads.
			now := t0.Add(24 * time.Hour)
			due, err := s.DueActions(ctx, now, time.Minute)
			if err != nil || len(due) != 1 || due[0].Key != "ep-0002-r5" || due[0].Body != "" {
				t.Fatalf("due: %+v %v, want ep-0002-r5 without its body", due, err)
			}
			cl, ok, err := s.Claim(ctx, due[0].Key, "test", "tok", now, time.Minute)
			if err != nil || !ok || cl.Body == "" {
				t.Fatalf("claim: %+v %v %v, want the action with its body", cl, ok, err)
			}
		})
	}
}

// BenchmarkOpenState: loading 500 open episodes that have each been
// reminded 100 times, as every decision does. 2026-11-30, 2 vCPU: with
// every action and body, 154 MB allocated per load, SQLite 0.32 s,
// PostgreSQL 0.22 s; with every action and top-level posts' bodies only,
// 103 MB, SQLite 0.25 s, PostgreSQL 0.15–0.19 s; with the actions a
// decision reads (two per episode here), 4 MB, SQLite 0.36 s, PostgreSQL
// 0.16 s (the database ranks every action; Go holds 1,000 of 50,000).
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

// TestOpenStateLoadsBodyInPlaceOfAFailedFirstPost: when an episode's first
// post failed for good, the step that went to the top of the channel in its
// place carries its frozen body in what a decision loads (a resolve edit
// starts from it), as a reply to a delivered first post does not (the
// history test).
func TestOpenStateLoadsBodyInPlaceOfAFailedFirstPost(t *testing.T) {
	ctx := context.Background()
	for _, d := range dialects[:2] {
		t.Run(d.name, func(t *testing.T) {
			s := open(t, d.url(t))
			first := action("k-first", "ep1", "d")
			second := action("k-second", "ep1", "d")
			second.Seq, second.ParentKey, second.CreatedAt = "step/x/1/0", first.Key, t0.Add(time.Minute)
			second.Body = `{"text":"second step"}`
			if _, _, err := s.Decide(ctx, func(model.Ledger) (model.Plan, error) {
				return model.Plan{Now: t0, Open: []model.Episode{newEpisode("ep1")}, Actions: []model.Action{first, second}}, nil
			}); err != nil {
				t.Fatal(err)
			}
			for a, o := range map[string]model.Outcome{
				first.Key:  {State: model.StateFailed, Error: "channel_not_found"},
				second.Key: {State: model.StateDelivered, ResultChannel: "C1", ResultTS: "1.0"},
			} {
				if _, ok, err := s.Claim(ctx, a, "test", "tok", t0.Add(2*time.Minute), time.Minute); err != nil || !ok {
					t.Fatalf("claim %s: %v %v", a, ok, err)
				}
				if err := s.Settle(ctx, a, "tok", o, t0.Add(2*time.Minute)); err != nil {
					t.Fatal(err)
				}
			}
			st, err := s.Peek(ctx)
			if err != nil {
				t.Fatal(err)
			}
			bodies := map[string]string{}
			for _, a := range st.Open[0].Actions {
				bodies[a.Key] = a.Body
			}
			if bodies[second.Key] != second.Body {
				t.Fatalf("loaded bodies %q: want the step posted in place of the failed first post with its body", bodies)
			}
		})
	}
}
