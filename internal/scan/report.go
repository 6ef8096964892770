// Package scan turns one kandev snapshot into findings. Everything here is a
// pure function of (snapshot, options, now): no I/O, no clock.
package scan

import (
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// SchemaVersion is the report format's version.
const SchemaVersion = 1

// Report is `watchdogd scan`'s output. Fields may be added; the
// listed ones never change.
type Report struct {
	SchemaVersion int             `json:"schema_version"`
	ScannedAt     string          `json:"scanned_at"`
	Sessions      []SessionReport `json:"sessions"`
	Findings      []Finding       `json:"findings"`
}

// SessionReport is one active session.
type SessionReport struct {
	SessionID             string            `json:"session_id"`
	TaskID                string            `json:"task_id"`
	TaskTitle             string            `json:"task_title"`
	WorkspaceID           string            `json:"workspace_id"`
	State                 string            `json:"state"`
	CurrentTurn           *TurnReport       `json:"current_turn"`
	KandevCurrentTurnID   *string           `json:"kandev_current_turn_id"`
	OpenTurns             int               `json:"open_turns"`
	PendingClarifications []BundleReport    `json:"pending_clarifications"`
	PendingPermission     *PermissionReport `json:"pending_permission"`
	MalformedMetadata     bool              `json:"malformed_metadata"`
}

// TurnReport is the current turn.
type TurnReport struct {
	ID             string  `json:"id"`
	Open           bool    `json:"open"`
	StartedAt      *string `json:"started_at"`
	LastActivityAt *string `json:"last_activity_at"`
}

// BundleReport is one pending clarification bundle for humans.
type BundleReport struct {
	PendingID string  `json:"pending_id"`
	AskedAt   *string `json:"asked_at"`
	Questions int     `json:"questions"`
	Detached  bool    `json:"detached"`
}

// PermissionReport is the pending permission request.
type PermissionReport struct {
	PendingID   string  `json:"pending_id"`
	RequestedAt *string `json:"requested_at"`
	ToolCallID  *string `json:"tool_call_id"`
}

// Finding is one thing wrong with one session. Its identity is (Kind,
// SessionID, TurnID, PendingID).
type Finding struct {
	Kind       model.Kind `json:"kind"`
	SessionID  string     `json:"session_id"`
	TaskID     string     `json:"task_id"`
	TurnID     *string    `json:"turn_id"`
	PendingID  *string    `json:"pending_id"`
	Since      string     `json:"since"`
	AgeSeconds int64      `json:"age_seconds"`
	Link       string     `json:"link"`
	// Added fields (the listed ones above never change).
	TaskTitle   string  `json:"task_title"`
	WorkspaceID string  `json:"workspace_id"`
	State       string  `json:"state"`
	Detail      *Detail `json:"detail,omitempty"`

	// SinceTime is Since as an instant.
	SinceTime time.Time `json:"-"`
}

// Detail is the evidence a notification shows.
type Detail struct {
	// LastActivityAt and LastActivityType describe the agent's last output
	// (stalled_turn).
	LastActivityAt   *string `json:"last_activity_at,omitempty"`
	LastActivityType string  `json:"last_activity_type,omitempty"`
	// Questions are a clarification bundle's questions.
	Questions []Question `json:"questions,omitempty"`
	Detached  bool       `json:"detached,omitempty"`
	// Permission is what the agent asks permission for.
	Permission string `json:"permission,omitempty"`
	// PermissionRequestID and PermissionOptions answer it in kandev
	// (permission.respond takes the request id and one option's id).
	PermissionRequestID string             `json:"permission_request_id,omitempty"`
	PermissionOptions   []PermissionOption `json:"permission_options,omitempty"`
	// OpenTurns is the open-turn count (multiple_open_turns).
	OpenTurns int `json:"open_turns,omitempty"`
	// KandevTurnID is the turn kandev treats as current
	// (shadowed_clarification).
	KandevTurnID string `json:"kandev_turn_id,omitempty"`
	// Interruption says what left the session parked
	// (interrupted_session): a restart, a dropped prompt, a lost
	// permission, or a turn abandoned otherwise.
	Interruption string `json:"interruption,omitempty"`
	// LostPermission is a permission asked on the closed turn, which
	// kandev still shows but can no longer grant (interrupted_session).
	LostPermission *LostPermission `json:"lost_permission,omitempty"`
	// AbandonedTurnID is the turn a restart abandoned (interrupted_session):
	// the episode clears when the session's newest turn is another, or the
	// agent replies on this one.
	AbandonedTurnID string `json:"abandoned_turn_id,omitempty"`
	// RestartAt is the restart instant of the abandoned turn (RestartAt).
	RestartAt *string `json:"restart_at,omitempty"`
	// AnsweredAt is when a person answered a question on the abandoned
	// turn after the restart; the finding's since is then the answer.
	AnsweredAt *string `json:"answered_at,omitempty"`
}

// What left a session parked (Detail.Interruption).
const (
	// InterruptionRestart: a kandev restart parked it and set the task's
	// interrupted_at.
	InterruptionRestart = "restart"
	// InterruptionDroppedPrompt: its current turn closed without a reply
	// to the last user message, and kandev shows it idle.
	InterruptionDroppedPrompt = "dropped_prompt"
	// InterruptionLostPermission: its current turn closed while the agent
	// waited for a permission, which kandev still shows but cannot grant.
	InterruptionLostPermission = "lost_permission"
	// InterruptionAbandoned: a restart abandoned its turn (closed at its
	// start) while the agent worked, or after a question on it was
	// answered, and no agent has picked the session up since.
	InterruptionAbandoned = "abandoned"
)

// LostPermission is a permission request a restart lost on a closed turn:
// kandev still shows it as pending, or (Status "expired") marked it expired
// when a grant failed.
type LostPermission struct {
	PendingID  string `json:"pending_id"`
	Permission string `json:"permission,omitempty"`
	Status     string `json:"status,omitempty"`
}

// Question is one question of a clarification bundle, as the agent wrote it.
type Question struct {
	ID      string   `json:"id"`
	Title   string   `json:"title,omitempty"`
	Prompt  string   `json:"prompt,omitempty"`
	Options []Option `json:"options,omitempty"`

	index int // question_index, for ordering
}

// Option is one answer a question offers.
type Option struct {
	ID          string `json:"option_id,omitempty"`
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// PermissionOption is one answer kandev offers a permission request:
// its id, its name for people, and its kind (allow_once, allow_always,
// reject_once, reject_always).
type PermissionOption struct {
	ID   string `json:"option_id"`
	Name string `json:"name"`
	Kind string `json:"kind,omitempty"`
}

// Key is a finding's identity as one string (logs, tests).
func (f Finding) Key() string {
	return string(f.Kind) + "/" + f.SessionID + "/" + deref(f.TurnID) + "/" + deref(f.PendingID)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
