package model

import (
	"reflect"
	"testing"
	"time"
)

// TestDropFuture: every timestamp after the limit is read as missing and
// its row named once per value; the limit itself and earlier values stay.
func TestDropFuture(t *testing.T) {
	limit := time.Date(2026, 11, 29, 12, 2, 0, 0, time.UTC)
	late, edge, early := limit.Add(5*time.Hour+30*time.Minute), limit, limit.Add(-time.Hour)
	snap := &Snapshot{Sessions: []Session{
		{ID: "s1", StartedAt: late, Current: &Turn{ID: "t1", StartedAt: edge, CompletedAt: late}, Messages: []Message{
			{Author: "agent", UpdatedAt: late},                                                // the newest update, as the statement gives it
			{ID: "m1", Author: "agent", Type: "tool_call", CreatedAt: early, UpdatedAt: late}, // closed with CURRENT_TIMESTAMP
			{ID: "m2", Author: "user", CreatedAt: early},
		}},
		{ID: "s2", StartedAt: early, Current: &Turn{NullID: true, StartedAt: late}},
		{ID: "s3", StartedAt: late}, // no current turn
	}}
	snap.DropFuture(limit)
	want := []RowRef{
		{Table: "task_sessions", ID: "s1"},
		{Table: "task_session_turns", ID: "t1"},
		{Table: "task_session_messages", Of: "newest update, turn t1"},
		{Table: "task_session_messages", ID: "m1"},
		{Table: "task_session_turns", Of: "NULL id, session s2"},
		{Table: "task_sessions", ID: "s3"},
	}
	if !reflect.DeepEqual(snap.Future, want) {
		t.Fatalf("future rows %v, want %v", snap.Future, want)
	}
	s1 := snap.Sessions[0]
	if !s1.StartedAt.IsZero() || !s1.Current.CompletedAt.IsZero() || !s1.Current.StartedAt.Equal(edge) ||
		!s1.Messages[0].UpdatedAt.IsZero() || !s1.Messages[1].UpdatedAt.IsZero() || !s1.Messages[1].CreatedAt.Equal(early) ||
		!s1.Messages[2].CreatedAt.Equal(early) || !snap.Sessions[1].StartedAt.Equal(early) {
		t.Fatalf("after DropFuture: %+v %+v %+v", s1, *s1.Current, snap.Sessions[1])
	}
}
