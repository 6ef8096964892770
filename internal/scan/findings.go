package scan

import (
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/watchdogd/watchdogd/internal/kandevtime"
	"github.com/watchdogd/watchdogd/internal/model"
)

// Findings builds the report for one snapshot at instant now.
func Findings(snap *model.Snapshot, opts Options, now time.Time) Report {
	rep := Report{SchemaVersion: SchemaVersion, ScannedAt: kandevtime.RFC3339(now),
		Sessions: make([]SessionReport, 0, len(snap.Sessions)), Findings: []Finding{}}
	interrupted := interruptedSessions(snap.Sessions)
	for _, s := range snap.Sessions {
		sr, fs := analyze(s, interrupted[s.ID], opts, now)
		rep.Sessions = append(rep.Sessions, sr)
		rep.Findings = append(rep.Findings, fs...)
	}
	// kandev's snapshot already holds its sessions in byte order of id
	// (the reader sorts them), so checking is all this costs on a real
	// scan; a snapshot built by hand is still sorted. A SessionReport is
	// large, so needlessly sorting 10,000 of them would move megabytes.
	bySession := func(a, b SessionReport) int { return strings.Compare(a.SessionID, b.SessionID) }
	if !slices.IsSortedFunc(rep.Sessions, bySession) {
		slices.SortStableFunc(rep.Sessions, bySession)
	}
	slices.SortStableFunc(rep.Findings, func(a, b Finding) int {
		if c := a.SinceTime.Compare(b.SinceTime); c != 0 {
			return c
		}
		if c := strings.Compare(string(a.Kind), string(b.Kind)); c != 0 {
			return c
		}
		if c := strings.Compare(a.SessionID, b.SessionID); c != 0 {
			return c
		}
		return strings.Compare(deref(a.PendingID), deref(b.PendingID))
	})
	return rep
}

// interruptedSessions picks, per task, the session interrupted_at applies
// to: kandev sets the key per task, so it concerns the task's primary
// session if that is active, else its newest active one.
//
// It keeps indexes, not copies: a Session is a few hundred bytes, and at
// 10,000 active sessions copies would be the scan's largest allocation.
func interruptedSessions(sessions []model.Session) map[string]bool {
	best := make(map[string]int, len(sessions))
	for i := range sessions {
		cur, ok := best[sessions[i].TaskID]
		if !ok || preferForTask(&sessions[i], &sessions[cur]) {
			best[sessions[i].TaskID] = i
		}
	}
	out := make(map[string]bool, len(best))
	for _, i := range best {
		out[sessions[i].ID] = true
	}
	return out
}

func preferForTask(a, b *model.Session) bool {
	if a.IsPrimary != b.IsPrimary {
		return a.IsPrimary
	}
	if !a.StartedAt.Equal(b.StartedAt) {
		return a.StartedAt.After(b.StartedAt)
	}
	return a.ID > b.ID
}

// analyze applies the findings table to one session.
//
// The findings judge the session's newest turn that is not a boot turn
// (Judged): the current turn, unless kandev's resume wrote a boot turn
// after it. The report's current turn is the rule's.
func analyze(s model.Session, interruptTarget bool, opts Options, now time.Time) (SessionReport, []Finding) {
	cur := s
	cur.Current, cur.Messages = Judged(s)
	f := readFacts(cur)
	kandevTurn := s.KandevTurnID
	if opts.KandevRule == RuleSpec && s.Current != nil {
		kandevTurn = s.Current.ID
	}
	sr := sessionReport(s, cur.Current, f, kandevTurn)
	base := Finding{SessionID: storable(s.ID), TaskID: storable(s.TaskID), TaskTitle: storable(s.TaskTitle),
		WorkspaceID: storable(s.WorkspaceID), State: storable(s.State), Link: TaskLink(opts.BaseURL, s.TaskID)}
	var out []Finding
	add := func(kind model.Kind, since time.Time, turnID, pendingID *string, d *Detail) {
		g := base
		g.Kind, g.TurnID, g.PendingID, g.Detail = kind, storablePtr(turnID), storablePtr(pendingID), d
		g.SinceTime, g.Since, g.AgeSeconds = since, kandevtime.RFC3339(since), ageSeconds(now, since)
		out = append(out, g)
	}
	th := opts.Thresholds
	askFindings(f, cur.Current, kandevTurn, th, now, add)
	turnFindings(cur, f, th, now, add)
	interruptedFindings(cur, f, interruptTarget, th, now, add)
	if s.OpenTurns > 1 && !s.SecondOpenStartedAt.IsZero() {
		add(model.KindMultipleOpenTurns, s.SecondOpenStartedAt, nil, nil, &Detail{OpenTurns: s.OpenTurns})
	}
	return sr, out
}

// adder records one finding of a session: its kind, since when, its turn
// and pending message if any, and its detail.
type adder func(kind model.Kind, since time.Time, turnID, pendingID *string, d *Detail)

// askFindings adds the current turn's questions and permission request
// that have waited past their thresholds. A question on a turn kandev does
// not show as current is shadowed: kandev's UI shows it nowhere.
func askFindings(f facts, cur *model.Turn, kandevTurn string, th Thresholds, now time.Time, add adder) {
	var turnID *string
	curID := "" // the reader reads messages only for a current turn; a hand-built snapshot may not
	if cur != nil {
		turnID, curID = turnRef(cur), cur.ID
	}
	for _, b := range f.bundles {
		if b.askedAt.IsZero() || now.Sub(b.askedAt) < th.ClarificationAfter {
			continue
		}
		kind, d := model.KindUnansweredClarification, &Detail{Questions: b.questions, Detached: b.detached}
		if kandevTurn != curID {
			kind, d.KandevTurnID = model.KindShadowedClarification, kandevTurn
		}
		add(kind, b.askedAt, turnID, ptr(b.pendingID), d)
	}
	if p := f.permission; p != nil && !p.requestedAt.IsZero() && now.Sub(p.requestedAt) >= th.PermissionAfter {
		add(model.KindPendingPermission, p.requestedAt, turnID, ptr(p.pendingID),
			&Detail{Permission: p.text, PermissionRequestID: p.requestID, PermissionOptions: p.options})
	}
}

// turnFindings adds what the current turn's progress shows: a turn (or a
// launch) that never started, or a turn whose agent went quiet.
func turnFindings(s model.Session, f facts, th Thresholds, now time.Time, add adder) {
	cur := s.Current
	working := s.State == "STARTING" || s.State == "RUNNING"
	switch {
	case working && cur != nil && cur.Open && !f.anyPending && !f.someAgent():
		if !cur.StartedAt.IsZero() && now.Sub(cur.StartedAt) >= th.NeverStartedAfter {
			add(model.KindNeverStarted, cur.StartedAt, turnRef(cur), nil, nil)
		}
	case s.State == "STARTING" && cur == nil:
		if !s.StartedAt.IsZero() && now.Sub(s.StartedAt) >= th.NeverStartedAfter {
			add(model.KindNeverStarted, s.StartedAt, nil, nil, nil) // a launch hang
		}
	case s.State == "RUNNING" && cur != nil && cur.Open && !f.anyPending && f.someAgent():
		// Activity at an unknown time leaves the turn's start as the last
		// time known: the stall is at most that old.
		if last := latest(cur.StartedAt, f.lastAgent); !last.IsZero() && now.Sub(last) >= th.StallAfter {
			add(model.KindStalledTurn, last, turnRef(cur), nil, &Detail{LastActivityAt: rfc(f.lastAgent), LastActivityType: f.lastAgentType})
		}
	}
}

// turnRef is the turn a finding names: none (turn_id null) for a turn
// whose id is NULL in kandev's table, which nothing can address.
func turnRef(cur *model.Turn) *string {
	if cur.NullID {
		return nil
	}
	return &cur.ID
}

// interruptedAt reads the task's interrupted_at (RFC 3339 text).
func interruptedAt(s model.Session) (time.Time, bool) {
	v, ok := s.TaskMetadata.String("interrupted_at")
	if !ok {
		return time.Time{}, false
	}
	return kandevtime.Parse(v)
}

func sessionReport(s model.Session, judged *model.Turn, f facts, kandevTurn string) SessionReport {
	sr := SessionReport{
		SessionID: s.ID, TaskID: s.TaskID, TaskTitle: s.TaskTitle, WorkspaceID: s.WorkspaceID, State: s.State,
		OpenTurns: s.OpenTurns, MalformedMetadata: s.MalformedMetadata, PendingClarifications: []BundleReport{},
	}
	if kandevTurn != "" {
		sr.KandevCurrentTurnID = ptr(kandevTurn)
	}
	if c := s.Current; c != nil {
		last := c.StartedAt // a boot turn, the current one when judged is another, holds no activity
		if c == judged {
			last = latest(c.StartedAt, f.lastAgent)
		}
		sr.CurrentTurn = &TurnReport{ID: c.ID, Open: c.Open, StartedAt: rfc(c.StartedAt), LastActivityAt: rfc(last)}
	}
	for _, b := range f.bundles {
		sr.PendingClarifications = append(sr.PendingClarifications, BundleReport{PendingID: b.pendingID, AskedAt: rfc(b.askedAt), Questions: len(b.questions), Detached: b.detached})
	}
	if p := f.permission; p != nil {
		sr.PendingPermission = &PermissionReport{PendingID: p.pendingID, RequestedAt: rfc(p.requestedAt), ToolCallID: p.toolCallID}
	}
	return sr
}

// TaskLink is the kandev page of a task: base_url/t/<task id>.
func TaskLink(base, taskID string) string {
	return strings.TrimRight(base, "/") + "/t/" + url.PathEscape(taskID)
}

// ageSeconds is whole seconds since since; a future instant is age 0.
func ageSeconds(now, since time.Time) int64 {
	d := now.Sub(since)
	if d < 0 {
		return 0
	}
	return int64(d / time.Second)
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func rfc(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := kandevtime.RFC3339(t)
	return &s
}

func ptr(s string) *string { return &s }

// storable makes a kandev value that a finding carries into the ledger
// valid UTF-8 without NUL. kandev's SQLite holds whatever bytes were
// written (a title with "\u0000" sent through its API, say), and
// PostgreSQL's text refuses both: one such title would fail every decision
// on a PostgreSQL ledger, and nobody would be told of anything. The few
// values it changes lose only the bad bytes (U+FFFD, as JSON output shows
// them anyway); the rest are returned as they are.
func storable(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// storablePtr is storable for an optional id, sharing the pointer when
// nothing changes (nearly always).
func storablePtr(s *string) *string {
	if s == nil {
		return nil
	}
	if v := storable(*s); v != *s {
		return &v
	}
	return s
}
