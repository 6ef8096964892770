package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevtime"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
)

// The operator commands' --output json: for scripts, what the tables
// show, in stable shapes. schema_version says which; fields may be added,
// the listed ones never change. Column names become snake_case, ids are
// added, times are RFC 3339 UTC and ages whole seconds, an absent value is
// null.
const opsSchemaVersion = 1

// episodeJSON is an episode in `episodes list --output json`.
type episodeJSON struct {
	ID          string  `json:"id"`
	Kind        string  `json:"kind"`
	SessionID   string  `json:"session_id"`
	TaskID      string  `json:"task_id"`
	TaskTitle   string  `json:"task_title"`
	WorkspaceID string  `json:"workspace_id"`
	TurnID      *string `json:"turn_id"`
	PendingID   *string `json:"pending_id"`
	Since       string  `json:"since"`
	AgeSeconds  int64   `json:"age_seconds"`
	State       string  `json:"state"` // open or resolved
	ResolvedAt  *string `json:"resolved_at"`
	Resolution  *string `json:"resolution"`
	// Cleared is why it resolved, as a code (watchdogd report's, the
	// duration metric's cleared label).
	Cleared *string `json:"cleared"`
}

// episodeDetailJSON is an episode in `episodes show --output json`: with
// every action, oldest first.
type episodeDetailJSON struct {
	episodeJSON
	Actions []actionJSON `json:"actions"`
}

// actionJSON is one row of `episodes show`'s action table.
type actionJSON struct {
	Seq       string `json:"seq"`
	Action    string `json:"action"`
	State     string `json:"state"`
	Attempts  int    `json:"attempts"`
	UpdatedAt string `json:"updated_at"`
	// Channel is where it was decided to go; DeliveredChannel and
	// DeliveredTS where it landed (Slack's channel and message ts).
	Channel          *string `json:"channel"`
	DeliveredChannel *string `json:"delivered_channel"`
	DeliveredTS      *string `json:"delivered_ts"`
	Error            *string `json:"error"`
	Conflicts        int     `json:"conflicts"`
}

// silenceJSON is a silence in `silence query --output json`.
type silenceJSON struct {
	ID string `json:"id"`
	// Match is its equality matchers, one a key (what a silence was
	// before it took matchers); Matchers is every one, as Alertmanager
	// spells them (kind="stalled_turn", workspace_id=~"ws-.*").
	Match     matchJSON `json:"match"`
	Matchers  []string  `json:"matchers"`
	CreatedAt string    `json:"created_at"`
	Until     string    `json:"until"`
	ExpiredAt *string   `json:"expired_at"` // when expired by hand
	State     string    `json:"state"`      // active or expired
	CreatedBy *string   `json:"created_by"`
	Comment   string    `json:"comment"`
}

// matchJSON is a silence's equality matchers; only the keys it has one on.
type matchJSON struct {
	WorkspaceID string `json:"workspace_id,omitempty"`
	TaskID      string `json:"task_id,omitempty"`
	SessionID   string `json:"session_id,omitempty"`
	Kind        string `json:"kind,omitempty"`
}

func toEpisodeJSON(e model.Episode, now time.Time) episodeJSON {
	j := episodeJSON{ID: e.ID, Kind: string(e.Kind), SessionID: e.SessionID, TaskID: e.TaskID, TaskTitle: e.TaskTitle,
		WorkspaceID: e.WorkspaceID, TurnID: opt(e.TurnID), PendingID: opt(e.PendingID), Since: kandevtime.RFC3339(e.Since),
		AgeSeconds: max(0, int64(now.Sub(e.Since)/time.Second)), State: "open"}
	if !e.Open() {
		j.State, j.ResolvedAt, j.Resolution, j.Cleared = "resolved", optTime(e.ResolvedAt), opt(e.Resolution), opt(string(e.Cleared))
	}
	return j
}

func toEpisodeDetailJSON(e model.Episode, now time.Time) episodeDetailJSON {
	j := episodeDetailJSON{episodeJSON: toEpisodeJSON(e, now), Actions: []actionJSON{}}
	for _, a := range e.Actions {
		j.Actions = append(j.Actions, actionJSON{Seq: a.Seq, Action: string(a.Kind), State: string(a.State), Attempts: a.Attempts,
			UpdatedAt: kandevtime.RFC3339(a.UpdatedAt), Channel: opt(a.Channel), DeliveredChannel: opt(a.ResultChannel),
			DeliveredTS: opt(a.ResultTS), Error: opt(a.Error), Conflicts: a.Conflicts})
	}
	return j
}

func toSilenceJSON(s ledger.Silence, now time.Time) silenceJSON {
	eq := func(k string) string { v, _ := s.Matchers.EqualValue(k); return v }
	j := silenceJSON{ID: s.ID, Match: matchJSON{WorkspaceID: eq("workspace_id"), TaskID: eq("task_id"), SessionID: eq("session_id"), Kind: eq("kind")},
		CreatedAt: kandevtime.RFC3339(s.CreatedAt), Until: kandevtime.RFC3339(s.Until), ExpiredAt: optTime(s.ExpiredAt),
		State: "active", CreatedBy: opt(s.CreatedBy), Comment: s.Comment, Matchers: []string{}}
	for _, m := range s.Matchers {
		j.Matchers = append(j.Matchers, m.String())
	}
	if !s.Active(now) {
		j.State = "expired"
	}
	return j
}

// writeOps writes {"schema_version": 1, "<key>": items} to w.
func writeOps[T any](w io.Writer, key string, items []T) error {
	if items == nil {
		items = []T{}
	}
	b, err := json.MarshalIndent(items, "  ", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "{\n  \"schema_version\": %d,\n  %q: %s\n}\n", opsSchemaVersion, key, b)
	return err
}

// opt is s, or nil (JSON null) when empty.
func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// optTime is t in RFC 3339 UTC, or nil when zero.
func optTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	return opt(kandevtime.RFC3339(t))
}
