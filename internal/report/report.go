// Package report says how much agent time was lost, and where, over a
// window of the ledger's history: per kind what opened, what cleared and
// why, what is still open and how long clearing took; the time agents sat
// stalled and the time they waited on a person, per session never counted
// twice; the workspaces and tasks that lost the most; per day and per
// hour. Compute is a pure function of the episodes the window touches, so
// `watchdogd report` and GET /api/v1/report give the same answer from the
// same rows. See README, "Report".
package report

import (
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// SchemaVersion is the JSON's schema_version: fields may be added, none
// of those there changes.
const SchemaVersion = 1

// Top is how many workspaces and tasks the report names.
const Top = 10

// Episode is what a report reads of one episode.
type Episode struct {
	// Kind is the kind it is now, or resolved as.
	Kind model.Kind
	// Cleared is why it resolved ("" while open).
	Cleared                                   model.Cleared
	SessionID, TaskID, TaskTitle, WorkspaceID string
	// Since is when its condition began, Opened when watchdogd opened it,
	// Resolved when it resolved (zero while open).
	Since, Opened, Resolved time.Time
}

// Input is what a report is computed from.
type Input struct {
	// Episodes are those the window touches: opened before Until, and
	// open or resolved at or after From.
	Episodes []Episode
	// From and Until bound the window: [From, Until).
	From, Until time.Time
	// Now is when the report is computed; the ledger keeps resolved
	// episodes for Retention before it.
	Now       time.Time
	Retention time.Duration
	// Truncated says the ledger held more episodes in the window than
	// were read: the oldest opened are left out.
	Truncated bool
}

// Report is the report, as its JSON says it.
type Report struct {
	SchemaVersion int    `json:"schema_version"`
	GeneratedAt   string `json:"generated_at"`
	Window        Window `json:"window"`
	Covers        Covers `json:"covers"`
	Kinds         []Kind `json:"kinds"`
	// AgentTimeLostSeconds is, summed over sessions, the time within the
	// window that a stalled_turn, never_started or interrupted_session
	// episode held on the session (from its since), overlaps counted once;
	// HumanOwedSeconds the same over the question and permission kinds.
	AgentTimeLostSeconds int64       `json:"agent_time_lost_seconds"`
	HumanOwedSeconds     int64       `json:"human_owed_seconds"`
	TopWorkspaces        []Workspace `json:"top_workspaces"`
	TopTasks             []Task      `json:"top_tasks"`
	Days                 []Day       `json:"days"`
	Hours                []Hour      `json:"hours"`
}

// Window is the window asked for.
type Window struct {
	From    string `json:"from"`
	Until   string `json:"until"`
	Seconds int64  `json:"seconds"`
}

// Covers is the part of the window the ledger's data covers: it keeps
// resolved episodes for the retention, and a read of more than the
// ledger's limit leaves the oldest out.
type Covers struct {
	From             string `json:"from"`
	Until            string `json:"until"`
	RetentionSeconds int64  `json:"retention_seconds"`
	Complete         bool   `json:"complete"`
	Truncated        bool   `json:"truncated"`
}

// Kind is one finding kind's summary.
type Kind struct {
	Kind model.Kind `json:"kind"`
	// Opened counts episodes opened in the window, Cleared those resolved
	// in it (by code in ClearedBy), StillOpen those open at its end; each
	// under the kind it is now (a question resolved as shadowed counts as
	// shadowed).
	Opened    int                   `json:"opened"`
	Cleared   int                   `json:"cleared"`
	ClearedBy map[model.Cleared]int `json:"cleared_by"`
	StillOpen int                   `json:"still_open"`
	// TimeToClear is over the episodes cleared in the window, from their
	// since; null when none cleared.
	TimeToClear *Percentiles `json:"time_to_clear_seconds"`
}

// Percentiles of a time, in seconds (nearest rank).
type Percentiles struct {
	Median int64 `json:"median"`
	P90    int64 `json:"p90"`
}

// Workspace is one workspace's lost and owed time.
type Workspace struct {
	WorkspaceID          string `json:"workspace_id"`
	AgentTimeLostSeconds int64  `json:"agent_time_lost_seconds"`
	HumanOwedSeconds     int64  `json:"human_owed_seconds"`
	Episodes             int    `json:"episodes"`
}

// Task is one task's lost and owed time.
type Task struct {
	TaskID               string `json:"task_id"`
	TaskTitle            string `json:"task_title"`
	WorkspaceID          string `json:"workspace_id"`
	AgentTimeLostSeconds int64  `json:"agent_time_lost_seconds"`
	HumanOwedSeconds     int64  `json:"human_owed_seconds"`
	Episodes             int    `json:"episodes"`
}

// Day is one UTC day of the window (the first and last may be partial).
type Day struct {
	Day                  string             `json:"day"`
	Opened               map[model.Kind]int `json:"opened"`
	Cleared              map[model.Kind]int `json:"cleared"`
	AgentTimeLostSeconds int64              `json:"agent_time_lost_seconds"`
	HumanOwedSeconds     int64              `json:"human_owed_seconds"`
}

// Hour is one hour of the window: how many episodes of each kind were
// open in it, at any moment (from when watchdogd opened them).
type Hour struct {
	Hour string             `json:"hour"`
	Open map[model.Kind]int `json:"open"`
}

// Compute is the report of in: a pure function of the episodes, the
// window and the instant.
func Compute(in Input) Report {
	from, until := in.From.UTC(), in.Until.UTC()
	r := Report{SchemaVersion: SchemaVersion, GeneratedAt: stamp(in.Now),
		Window: Window{From: stamp(from), Until: stamp(until), Seconds: int64(until.Sub(from) / time.Second)}}
	r.Covers = covers(in, from, until)
	r.Kinds = kinds(in.Episodes, from, until)
	days, hours := newDays(from, until), newHours(from, until)
	for _, e := range in.Episodes {
		if at := e.Opened; !at.Before(from) && at.Before(until) {
			days.at(at).Opened[e.Kind]++
		}
		if at := e.Resolved; !e.Resolved.IsZero() && !at.Before(from) && at.Before(until) {
			days.at(at).Cleared[e.Kind]++
		}
	}
	hours.count(in.Episodes, until)
	lost := lostTime(in.Episodes, from, until, days)
	r.AgentTimeLostSeconds, r.HumanOwedSeconds = lost.agent, lost.human
	r.TopWorkspaces, r.TopTasks = lost.top()
	r.Days, r.Hours = days.list, hours.list
	return r
}

// covers is what the data covers of the window.
func covers(in Input, from, until time.Time) Covers {
	c := Covers{RetentionSeconds: int64(in.Retention / time.Second), Truncated: in.Truncated}
	start := from
	if kept := in.Now.Add(-in.Retention).UTC(); in.Retention > 0 && kept.After(start) {
		start = kept
	}
	if in.Truncated && len(in.Episodes) > 0 {
		// The read was newest first: what opened before the oldest read
		// may be missing.
		oldest := in.Episodes[0].Opened
		for _, e := range in.Episodes {
			if e.Opened.Before(oldest) {
				oldest = e.Opened
			}
		}
		if oldest.After(start) {
			start = oldest.UTC()
		}
	}
	if start.After(until) {
		start = until
	}
	c.From, c.Until, c.Complete = stamp(start), stamp(until), start.Equal(from) && !in.Truncated
	return c
}

// stamp is a time as the report writes it: RFC 3339 UTC, to the µs.
func stamp(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format("2006-01-02T15:04:05.999999Z07:00")
}

// seconds is a duration in whole seconds.
func seconds(d time.Duration) int64 { return int64(d / time.Second) }
