//go:build faults

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
)

// TestSoak runs the daemon at a one-second schedule over sessions that
// progress, stall, ask and get answered, for -soak (90s on CI, 10 minutes
// in make soak): RSS grows by less than 10 MiB, goroutines come back to
// where they were once every action has settled, no message is
// duplicated, and every episode resolves once its condition clears.
func TestSoak(t *testing.T) {
	const sessions = 30
	now := time.Now()
	b := kandevdb.NewBuilder(now)
	for i := 0; i < sessions; i++ {
		s := b.Session(fmt.Sprintf("soak-%02d", i), fmt.Sprintf("Soak task %d", i), fmt.Sprintf("ws-%d", i%3), "RUNNING", time.Hour, "")
		s.Turn(fmt.Sprintf("soak-%02d-t0", i), time.Minute, -1, "").Agent("tool_call", time.Second)
	}
	// pprof: a goroutine dump when the count does not come back down.
	extra, base := daemonConfig(t, `  pprof: true
thresholds:
  stall_after: 4s
  clarification_after: 2s
  never_started_after: 4s
policy:
  unanswered_clarification:
    steps: [{after: 0s, action: slack}, {after: 6s, action: slack, mention: true}]
    repeat_every: 6s
  stalled_turn:
    steps: [{after: 0s, action: slack}, {after: 5s, action: slack, mention: true}]
`)
	e := newEnv(t, b.DS, "sqlite", extra)
	d := e.startDaemon(base)
	waitFor(t, 20*time.Second, "ready", func() bool { code, _ := d.get("/readyz"); return code == 200 })

	db := e.kandev.DB()
	rng := rand.New(rand.NewPCG(3, 5))
	turn := make([]int, sessions)
	var mutations int
	var mu sync.Mutex
	mutate := func(i int) {
		id := fmt.Sprintf("soak-%02d", i)
		cur := fmt.Sprintf("%s-t%d", id, turn[i])
		ts := kandevdb.TS(time.Now())
		var err error
		switch r := rng.IntN(10); {
		case r < 4: // the agent works
			_, err = db.Exec(`INSERT INTO task_session_messages (id, task_session_id, task_id, turn_id, author_type, type, content, metadata, created_at, updated_at)
			  VALUES (?, ?, ?, ?, 'agent', 'tool_call', 'working', '{}', ?, ?)`, fmt.Sprintf("%s-m%d", cur, rng.Int()), id, "task-"+id, cur, ts, ts)
		case r < 7: // silence: it may stall
		case r == 7: // it asks
			_, err = db.Exec(`INSERT INTO task_session_messages (id, task_session_id, task_id, turn_id, author_type, type, content, metadata, created_at, updated_at)
			  VALUES (?, ?, ?, ?, 'agent', 'clarification_request', 'Which?', ?, ?, ?)`, fmt.Sprintf("%s-q%d", cur, rng.Int()), id, "task-"+id, cur,
				fmt.Sprintf(`{"pending_id": "p-%s-%d", "question_id": "q", "status": "pending"}`, cur, rng.IntN(3)), ts, ts)
		case r == 8: // a human answers
			_, err = db.Exec(`UPDATE task_session_messages SET metadata = json_set(metadata, '$.status', 'answered') WHERE task_session_id = ? AND type = 'clarification_request'`, id)
		default: // the turn ends and a new one starts
			if _, err = db.Exec(`UPDATE task_session_turns SET completed_at = ? WHERE task_session_id = ? AND completed_at IS NULL`, ts, id); err == nil {
				turn[i]++
				_, err = db.Exec(`INSERT INTO task_session_turns (id, task_session_id, task_id, started_at, created_at, metadata) VALUES (?, ?, ?, ?, ?, '{}')`,
					fmt.Sprintf("%s-t%d", id, turn[i]), id, "task-"+id, ts, ts)
			}
		}
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		mutations++
		mu.Unlock()
	}
	time.Sleep(10 * time.Second) // warm up
	rss0, g0 := d.metric(t, "process_resident_memory_bytes"), d.metric(t, "go_goroutines")
	end := time.Now().Add(*soak)
	rssMax := rss0
	for time.Now().Before(end) {
		for i := 0; i < sessions; i++ {
			mutate(i)
		}
		if v := d.metric(t, "process_resident_memory_bytes"); v > rssMax {
			rssMax = v
		}
		time.Sleep(time.Second)
	}
	rss1 := d.metric(t, "process_resident_memory_bytes")
	rssMax = max(rssMax, rss1) // the maximum over every sample, the last included
	// Every condition clears: turns end, questions are answered, sessions
	// complete.
	ts := kandevdb.TS(time.Now())
	for _, q := range []string{
		`UPDATE task_session_messages SET metadata = json_set(metadata, '$.status', 'answered') WHERE type = 'clarification_request'`,
		`UPDATE task_session_turns SET completed_at = '` + ts + `' WHERE completed_at IS NULL`,
		`UPDATE task_sessions SET state = 'COMPLETED'`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 20*time.Second, "every episode resolved", func() bool {
		eps, err := e.ledger().Episodes(context.Background(), true, 1000)
		return err == nil && len(eps) == 0
	})
	// The resolves' edits go out paced at one per second per channel (as
	// Slack asks), so up to one per session is still queued here.
	waitFor(t, 2*time.Minute, "every action settled", func() bool {
		for _, a := range e.actions() {
			if a.State == model.StatePending || a.State == model.StateClaimed {
				return false
			}
		}
		return true
	})
	time.Sleep(3 * time.Second) // a duplicate sent after settling would show here
	posts := e.exactlyOnce()
	// Goroutines once everything settled, the fewest of five samples a
	// second apart: a cycle in flight (a Slack request, a scan) holds a few
	// for a moment, a leak holds them for good.
	g1 := d.metric(t, "go_goroutines")
	for range 4 {
		time.Sleep(time.Second)
		g1 = min(g1, d.metric(t, "go_goroutines"))
	}
	eps, _ := e.ledger().Episodes(context.Background(), false, 100000)
	growth := (rss1 - rss0) / (1 << 20)
	// Under the race detector the daemon's shadow memory grows with every
	// heap address it touches, so its RSS says nothing about a leak there;
	// the goroutine count still does.
	if growth >= 10 && !raceBuild {
		t.Errorf("RSS grew %.1f MiB (%.1f → %.1f)", growth, rss0/(1<<20), rss1/(1<<20))
	}
	if g1 > g0+5 {
		_, dump := d.get("/debug/pprof/goroutine?debug=1")
		t.Errorf("goroutines %v → %v; the daemon's:\n%s", g0, g1, dump)
	}
	edited := 0
	for _, m := range e.slack.Messages() {
		if m.Edits > 0 {
			edited++
		}
	}
	figure(t, "%s at a 1s schedule, %d sessions, %d mutations: %d episodes, %d posts once each, %d first messages edited on resolve, all resolved; RSS %.1f → %.1f MiB (max %.1f), goroutines %v → %v",
		soak.String(), sessions, mutations, len(eps), posts, edited, rss0/(1<<20), rss1/(1<<20), rssMax/(1<<20), g0, g1)
}
