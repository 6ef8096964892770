package kandev_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

// TestSessionsSortedByID: the sessions statement returns its rows in no
// order, so the snapshot sorts them. Sessions are written in reverse id
// order, in mixed case and several states, so neither the table's physical
// order nor the state index yields byte order; each session keeps its own
// turns and messages through the sort.
func TestSessionsSortedByID(t *testing.T) {
	states := []string{"RUNNING", "WAITING_FOR_INPUT", "IDLE", "STARTING"}
	b := kandevdb.NewBuilder(now)
	var want []string
	for i := 40; i > 0; i-- {
		id := fmt.Sprintf("s%02d", i)
		if i%3 == 0 {
			id = strings.ToUpper(id) // "S…" sorts before "s…" in byte order
		}
		want = append(want, id)
		s := b.Session(id, "task", "ws", states[i%len(states)], time.Hour, "")
		s.Turn(id+"-t", 30*time.Minute, -1, "").Agent("message", 20*time.Minute)
	}
	slices.Sort(want)
	for _, dc := range dialects {
		t.Run(dc.name, func(t *testing.T) {
			db := load(t, dc, b.DS, kandevdb.Options{})
			snap := snapshot(t, db.URL(), kandev.Options{})
			var got []string
			for _, s := range snap.Sessions {
				got = append(got, s.ID)
				if s.Current == nil || s.Current.ID != s.ID+"-t" || len(s.Messages) != 1 {
					t.Errorf("session %s: current %+v, %d messages (rows mixed up by the sort?)", s.ID, s.Current, len(s.Messages))
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("sessions in order %v, want %v", got, want)
			}
		})
	}
}

// TestMalformedRowLateInTheStream: on PostgreSQL the fast statement streams
// its rows, so a metadata value that fails ::jsonb can surface after
// thousands of rows have already arrived. The snapshot must still fall
// back, whole, to reading metadata as text: every session, the bad row
// flagged, nothing doubled.
func TestMalformedRowLateInTheStream(t *testing.T) {
	const good = 3000
	b := kandevdb.NewBuilder(now)
	for i := 0; i < good; i++ {
		s := b.Session(fmt.Sprintf("s%05d", i), "task", "ws", "RUNNING", time.Hour, "")
		s.Turn(fmt.Sprintf("s%05d-t", i), 30*time.Minute, -1, "").Agent("message", 20*time.Minute)
	}
	// Written last: the last row the statement reaches.
	s := b.Session("zz-bad", "task", "ws", "RUNNING", time.Hour, "")
	s.Turn("zz-bad-t", 30*time.Minute, -1, "").Agent("message", 20*time.Minute)
	b.DS.Turns[len(b.DS.Turns)-1].Metadata = kandevdb.P("{")
	db := load(t, dialects[1], b.DS, kandevdb.Options{})
	analyze(t, db.URL())
	snap := snapshot(t, db.URL(), kandev.Options{})
	if !snap.Fallback {
		t.Error("the malformed row did not send the snapshot down the fallback")
	}
	if len(snap.Sessions) != good+1 {
		t.Fatalf("%d sessions, want %d", len(snap.Sessions), good+1)
	}
	last := snap.Sessions[good]
	if last.ID != "zz-bad" || !last.MalformedMetadata || last.Current == nil || last.Current.ID != "zz-bad-t" {
		t.Errorf("last session %+v: want zz-bad, malformed, current zz-bad-t", last)
	}
	if len(snap.Malformed) != 1 || snap.Malformed[0].ID != "zz-bad-t" {
		t.Errorf("malformed rows %v, want only zz-bad-t", snap.Malformed)
	}
}

// analyze gives PostgreSQL's planner the statistics autovacuum keeps on a
// live kandev database, so the test runs the plan production runs (without
// them the planner takes the active sessions for a handful of rows).
func analyze(t *testing.T, url string) {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if _, err := db.ExecContext(context.Background(), "ANALYZE"); err != nil {
		t.Fatal(err)
	}
}

// TestMessageRowsInCreationOrder: the current turn's rows come in creation
// order on both dialects, whatever order the table holds them in (here
// written newest first).
func TestMessageRowsInCreationOrder(t *testing.T) {
	ds := kandevdb.Dataset{
		Tasks:    []kandevdb.Task{{ID: "task", WorkspaceID: "ws", Title: "T"}},
		Sessions: []kandevdb.Session{{ID: "s", TaskID: "task", State: "RUNNING"}},
		Turns:    []kandevdb.Turn{{ID: "t", SessionID: "s", TaskID: "task", StartedAt: "2026-11-29 11:00:00+00:00"}},
	}
	for i := 5; i >= 1; i-- {
		at := fmt.Sprintf("2026-11-29 11:0%d:00+00:00", i)
		ds.Messages = append(ds.Messages, kandevdb.Message{ID: fmt.Sprintf("m%d", 6-i), SessionID: "s", TaskID: "task", TurnID: "t",
			Author: "agent", Type: "clarification_request", Metadata: kandevdb.P(`{"pending_id": "p"}`), CreatedAt: at, UpdatedAt: at})
	}
	for _, dc := range dialects {
		t.Run(dc.name, func(t *testing.T) {
			db := load(t, dc, ds, kandevdb.Options{})
			var got []string
			for _, m := range snapshot(t, db.URL(), kandev.Options{}).Sessions[0].Messages {
				if !m.Aggregate() {
					got = append(got, m.ID)
				}
			}
			if want := []string{"m5", "m4", "m3", "m2", "m1"}; !slices.Equal(got, want) {
				t.Errorf("rows %v, want creation order %v", got, want)
			}
		})
	}
}
