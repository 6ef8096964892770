// Package kandevdb builds kandev-shaped databases — SQLite files and
// PostgreSQL schemas with kandev's tables, columns and text timestamp shapes —
// from Go values. Tests, `watchdogd demo` and the benchmarks use it; it never
// touches a real kandev installation.
package kandevdb

import (
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevtime"
)

// Dataset is a set of kandev rows. Timestamps are the text kandev would store
// in SQLite (any shape); on PostgreSQL they are parsed and stored as
// timestamp without time zone (UTC), so they must be parseable there. Pointer
// fields are nullable columns.
type Dataset struct {
	Tasks    []Task
	Sessions []Session
	Turns    []Turn
	Messages []Message
	Queued   []Queued
}

// Task is a tasks row.
type Task struct {
	ID          string
	WorkspaceID string
	Title       string
	State       string
	Metadata    *string
	ArchivedAt  *string
	CreatedAt   string
}

// Session is a task_sessions row.
type Session struct {
	ID          string
	TaskID      string
	State       string
	IsPrimary   bool
	StartedAt   *string
	CompletedAt *string
	UpdatedAt   string
}

// Turn is a task_session_turns row.
type Turn struct {
	ID          string
	SessionID   string
	TaskID      string
	StartedAt   string
	CreatedAt   *string
	CompletedAt *string
	Metadata    *string
	// UpdatedAt is the row's updated_at; nil writes its completed_at, or
	// its started_at while it is open.
	UpdatedAt *string
}

// Message is a task_session_messages row.
type Message struct {
	ID        string
	SessionID string
	TaskID    string
	TurnID    string
	Author    string
	Type      string
	Content   string
	Metadata  *string
	CreatedAt string
	UpdatedAt string
}

// Queued is a queued_messages row.
type Queued struct {
	ID        string
	SessionID string
	TaskID    string
	Position  int
	Content   string
	QueuedAt  string
}

// Append adds another dataset's rows.
func (d *Dataset) Append(o Dataset) {
	d.Tasks = append(d.Tasks, o.Tasks...)
	d.Sessions = append(d.Sessions, o.Sessions...)
	d.Turns = append(d.Turns, o.Turns...)
	d.Messages = append(d.Messages, o.Messages...)
	d.Queued = append(d.Queued, o.Queued...)
}

// Len is the number of rows.
func (d Dataset) Len() int {
	return len(d.Tasks) + len(d.Sessions) + len(d.Turns) + len(d.Messages) + len(d.Queued)
}

// TS writes t in kandev's main shape.
func TS(t time.Time) string { return kandevtime.Format(t) }

// P returns a pointer to s, for nullable columns.
func P(s string) *string { return &s }
