package model

import (
	"time"

	"github.com/watchdogd/watchdogd/internal/authority"
)

// Snapshot is one consistent read of kandev: every active session (a
// non-terminal session of a non-archived task) with what the finding rules
// need. It is plain data; internal/scan turns it into findings.
type Snapshot struct {
	Dialect  authority.Dialect
	Sessions []Session // sorted by ID, in byte order
	// Statements is how many SQL statements the snapshot ran (transaction
	// control included). It does not depend on the number of sessions.
	Statements int
	// Fallback is true when PostgreSQL could not cast some metadata and the
	// snapshot re-read the turns as text for the Go rule.
	Fallback bool
	// Malformed lists rows kandev itself cannot read: metadata the dialect
	// cannot parse, read as "no flags set"; and, on SQLite, whose TEXT
	// PRIMARY KEY admits one, a NULL id (see RowRef).
	Malformed []RowRef
	// Unparseable lists the row of each timestamp value no kandev shape
	// matched (a row once per such value); each was read as missing, so a
	// finding that needed it could not be made.
	Unparseable []RowRef
	// Future lists the row of each timestamp value DropFuture read as
	// missing, being too far after the scan to be true.
	Future []RowRef
}

// RowRef names one row of kandev's tables. A row with no id to go by (a
// NULL id, or the newest update of a turn, which the statement returns
// without its id) has ID "" and Of saying what it belongs to, for an
// operator to find it by: "NULL id, session …", "newest update, turn …".
type RowRef struct {
	Table string
	ID    string
	Of    string
}

// String is how a log line names the row.
func (r RowRef) String() string {
	if r.Of != "" {
		return r.Table + "/(" + r.Of + ")"
	}
	return r.Table + "/" + r.ID
}

// Session is one active session.
type Session struct {
	ID          string
	TaskID      string
	TaskTitle   string
	WorkspaceID string
	State       string
	IsPrimary   bool
	// StartedAt is the session's start; zero when missing or unparseable.
	StartedAt time.Time
	// TaskMetadata is the task's metadata (interrupted_at lives there).
	TaskMetadata authority.Metadata
	// Current is the current turn by the rule (docs/architecture.md);
	// nil when none (D8).
	Current *Turn
	// KandevTurnID is released kandev's current turn (keys 2–4, no lifecycle
	// exclusion); "" when none.
	KandevTurnID string
	// OpenTurns counts open eligible conversational turns.
	OpenTurns int
	// SecondOpenStartedAt is the second-oldest open turn's start when
	// OpenTurns > 1.
	SecondOpenStartedAt time.Time
	// Queued counts queued_messages rows for the session.
	Queued int
	// Messages are the current turn's rows that the rules read, plus one
	// aggregate row carrying the newest update of the turn's other agent
	// messages.
	Messages []Message
	// BeforeBoot is, when the current turn is a boot turn (the synthetic
	// turn kandev writes on every resume, which released kandev does not
	// mark lifecycle_only; internal/scan recognises it), the session's
	// newest turn that is not one, by the same rule with boot turns left
	// out, with BeforeBootMessages read as Messages are. nil otherwise, or
	// when every turn is a boot turn.
	BeforeBoot         *Turn
	BeforeBootMessages []Message
	// MalformedMetadata is true when a turn the answer rests on (the open
	// turns, the newest conversational one, kandev's) or a message read
	// from the current turn has metadata kandev itself cannot parse. Both
	// dialects, and both of PostgreSQL's paths, check the same turns.
	MalformedMetadata bool
}

// Turn is the part of a turn record the rules read.
type Turn struct {
	ID   string
	Open bool
	// NullID is true when the row's id is NULL (ID is ""): kandev cannot
	// read the turn, and no message can name it.
	NullID    bool
	StartedAt time.Time // zero when unparseable
	// CompletedAt is when a closed turn closed; zero while open, and when
	// unparseable.
	CompletedAt time.Time
	// UpdatedAt is a closed turn's updated_at: when kandev last wrote the
	// row, which for a turn a restart abandoned is the restart (its
	// started_at and completed_at are the turn's start). Zero while open,
	// and when missing or unparseable.
	UpdatedAt time.Time
	// MessageCount is how many messages the turn holds in kandev, all of
	// them (Messages holds only those the rules read), once its messages
	// were read.
	MessageCount int
	// RepliedAt is the newest creation among the turn's plain agent rows
	// that are no question or permission, read only for a turn a restart
	// may have abandoned (scan.MayBeAbandoned); zero otherwise, or when it
	// holds none.
	RepliedAt time.Time
}

// Message is one row of the current turn. A user-authored row carries its
// id, type and creation only.
type Message struct {
	// ID is empty for the aggregate row, and for a row whose id is NULL
	// (NullID).
	ID     string
	NullID bool
	Author string // "agent" or "user"
	// Type is the row's type; for the aggregate row, the newest plain
	// message's type.
	Type      string
	Content   string
	Meta      authority.Metadata
	CreatedAt time.Time // zero when missing or unparseable
	UpdatedAt time.Time
}

// Aggregate reports whether m stands for "the newest of the turn's other
// agent messages".
func (m Message) Aggregate() bool { return m.ID == "" && !m.NullID }

// TurnRow names the turn with this id.
func TurnRow(id string) RowRef { return RowRef{Table: "task_session_turns", ID: id} }

// TurnRowOf names a turn of a session, by the session when its id is NULL.
func TurnRowOf(id string, nullID bool, session string) RowRef {
	if nullID {
		return RowRef{Table: "task_session_turns", Of: "NULL id, session " + session}
	}
	return TurnRow(id)
}

// MessageRow names a message of the turn, by the turn when its id is NULL.
func MessageRow(m Message, turn string) RowRef {
	if m.NullID {
		return RowRef{Table: "task_session_messages", Of: "NULL id, turn " + turn}
	}
	return RowRef{Table: "task_session_messages", ID: m.ID}
}
