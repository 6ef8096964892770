package kandevdb

import (
	"encoding/json"
	"fmt"
	"time"
)

// Builder writes scenario datasets relative to a fixed "now", so tests and
// the demo say "a turn started 50 minutes ago" instead of timestamps.
type Builder struct {
	Now time.Time
	DS  Dataset
	seq int
}

// NewBuilder starts an empty dataset.
func NewBuilder(now time.Time) *Builder { return &Builder{Now: now} }

// Ago is kandev's main-shape text for now minus d.
func (b *Builder) Ago(d time.Duration) string { return TS(b.Now.Add(-d)) }

// SessionB adds rows to one session.
type SessionB struct {
	b    *Builder
	Task string
	ID   string
}

// TurnB adds messages to one turn.
type TurnB struct {
	s  *SessionB
	ID string
}

// Session adds a task (title, workspace) and one of its sessions in state,
// started startedAgo ago. taskMeta is the task's metadata JSON ("" for {}).
func (b *Builder) Session(id, title, workspace, state string, startedAgo time.Duration, taskMeta string) *SessionB {
	task := "task-" + id
	if taskMeta == "" {
		taskMeta = "{}"
	}
	b.DS.Tasks = append(b.DS.Tasks, Task{ID: task, WorkspaceID: workspace, Title: title, Metadata: P(taskMeta), CreatedAt: b.Ago(startedAgo + time.Hour)})
	b.DS.Sessions = append(b.DS.Sessions, Session{ID: id, TaskID: task, State: state, IsPrimary: true, StartedAt: P(b.Ago(startedAgo)), UpdatedAt: b.Ago(0)})
	return &SessionB{b: b, Task: task, ID: id}
}

// Turn adds a turn started startedAgo ago; completedAgo < 0 leaves it open.
// meta is its metadata JSON ("" for {}).
func (s *SessionB) Turn(id string, startedAgo, completedAgo time.Duration, meta string) *TurnB {
	if meta == "" {
		meta = "{}"
	}
	t := Turn{ID: id, SessionID: s.ID, TaskID: s.Task, StartedAt: s.b.Ago(startedAgo), CreatedAt: P(s.b.Ago(startedAgo)), Metadata: P(meta)}
	if completedAgo >= 0 {
		t.CompletedAt = P(s.b.Ago(completedAgo))
	}
	s.b.DS.Turns = append(s.b.DS.Turns, t)
	return &TurnB{s: s, ID: id}
}

// Queue adds a queued message for the session.
func (s *SessionB) Queue(content string) {
	s.b.seq++
	s.b.DS.Queued = append(s.b.DS.Queued, Queued{ID: fmt.Sprintf("q%d", s.b.seq), SessionID: s.ID, TaskID: s.Task, Content: content, QueuedAt: s.b.Ago(0)})
}

// Message adds a message updated updatedAgo ago.
func (t *TurnB) Message(author, typ, content string, updatedAgo time.Duration, meta string) *TurnB {
	b := t.s.b
	b.seq++
	if meta == "" {
		meta = "{}"
	}
	b.DS.Messages = append(b.DS.Messages, Message{ID: fmt.Sprintf("%s-m%d", t.ID, b.seq), SessionID: t.s.ID, TaskID: t.s.Task, TurnID: t.ID,
		Author: author, Type: typ, Content: content, Metadata: P(meta), CreatedAt: b.Ago(updatedAgo), UpdatedAt: b.Ago(updatedAgo)})
	return t
}

// Agent adds agent output of a type (tool_call, message, …).
func (t *TurnB) Agent(typ string, updatedAgo time.Duration) *TurnB {
	return t.Message("agent", typ, "…", updatedAgo, "")
}

// QuestionOpt is an answer a clarification offers.
type QuestionOpt struct {
	ID, Label, Description string
}

// Clarification adds one question of bundle pendingID; status "" writes no
// status key (pending). extra are more metadata members.
func (t *TurnB) Clarification(pendingID, questionID, title, prompt string, opts []QuestionOpt, status string, askedAgo time.Duration, extra map[string]any) *TurnB {
	options := make([]map[string]string, len(opts))
	for i, o := range opts {
		options[i] = map[string]string{"option_id": o.ID, "label": o.Label, "description": o.Description}
	}
	meta := map[string]any{
		"pending_id": pendingID, "question_id": questionID,
		"question": map[string]any{"id": questionID, "title": title, "prompt": prompt, "options": options},
	}
	if status != "" {
		meta["status"] = status
	}
	for k, v := range extra {
		meta[k] = v
	}
	return t.Message("agent", "clarification_request", prompt, askedAgo, mustJSON(meta))
}

// Permission adds a permission request.
func (t *TurnB) Permission(pendingID, content, status string, askedAgo time.Duration) *TurnB {
	meta := map[string]any{"pending_id": pendingID, "tool_call_id": "tc-" + pendingID}
	if status != "" {
		meta["status"] = status
	}
	return t.Message("agent", "permission_request", content, askedAgo, mustJSON(meta))
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings always marshal
	}
	return string(b)
}
