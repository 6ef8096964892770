package report

import (
	"cmp"
	"slices"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// Lost says which time a kind's episode counts as: agent time lost (the
// agent sat stalled, never started, or parked by a restart), human-owed
// time (it waited on a person's answer), or neither (several open turns
// are kandev's inconsistency, not a wait).
func Lost(k model.Kind) (agent, human bool) {
	switch k {
	case model.KindStalledTurn, model.KindNeverStarted, model.KindInterruptedSession:
		return true, false
	case model.KindUnansweredClarification, model.KindShadowedClarification, model.KindPendingPermission:
		return false, true
	}
	return false, false
}

// span is [from, to).
type span struct{ from, to time.Time }

// union merges spans into disjoint ones, in order: time two episodes of a
// session held at once counts once.
func union(ss []span) []span {
	slices.SortFunc(ss, func(a, b span) int { return a.from.Compare(b.from) })
	var out []span
	for _, s := range ss {
		if n := len(out); n > 0 && !s.from.After(out[n-1].to) {
			if s.to.After(out[n-1].to) {
				out[n-1].to = s.to
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// held is the span episode e held within [from, until): from its since
// (when the condition began) to its resolve, or to until while it is
// open; ok is false when it held none of it.
func held(e Episode, from, until time.Time) (span, bool) {
	end := until
	if !e.Resolved.IsZero() && e.Resolved.Before(until) {
		end = e.Resolved
	}
	start := e.Since
	if start.Before(from) {
		start = from
	}
	return span{start, end}, start.Before(end)
}

// session is one session's spans of each sort, and whose it is.
type session struct {
	task, title, workspace string
	agent, human           []span
	episodes               int
}

// losses are the lost and owed time, totalled and by workspace and task.
type losses struct {
	agent, human int64
	workspaces   map[string]*Workspace
	tasks        map[string]*Task
}

// lostTime adds up the time each session lost and owed within [from,
// until), each session's spans of a sort merged first, and gives each day
// its share.
func lostTime(eps []Episode, from, until time.Time, days *calendar) losses {
	sessions := map[string]*session{}
	for _, e := range eps {
		agent, human := Lost(e.Kind)
		sp, ok := held(e, from, until)
		if !ok || !agent && !human {
			continue
		}
		s := sessions[e.SessionID]
		if s == nil {
			s = &session{task: e.TaskID, title: e.TaskTitle, workspace: e.WorkspaceID}
			sessions[e.SessionID] = s
		}
		s.episodes++
		if agent {
			s.agent = append(s.agent, sp)
		} else {
			s.human = append(s.human, sp)
		}
	}
	l := losses{workspaces: map[string]*Workspace{}, tasks: map[string]*Task{}}
	for _, s := range sessions {
		w := l.workspaces[s.workspace]
		if w == nil {
			w = &Workspace{WorkspaceID: s.workspace}
			l.workspaces[s.workspace] = w
		}
		t := l.tasks[s.task]
		if t == nil {
			t = &Task{TaskID: s.task, TaskTitle: s.title, WorkspaceID: s.workspace}
			l.tasks[s.task] = t
		}
		w.Episodes += s.episodes
		t.Episodes += s.episodes
		a := days.spread(union(s.agent), func(d *Day, secs int64) { d.AgentTimeLostSeconds += secs })
		h := days.spread(union(s.human), func(d *Day, secs int64) { d.HumanOwedSeconds += secs })
		l.agent, l.human = l.agent+a, l.human+h
		w.AgentTimeLostSeconds, w.HumanOwedSeconds = w.AgentTimeLostSeconds+a, w.HumanOwedSeconds+h
		t.AgentTimeLostSeconds, t.HumanOwedSeconds = t.AgentTimeLostSeconds+a, t.HumanOwedSeconds+h
	}
	return l
}

// top is the Top workspaces and tasks by agent time lost, then human-owed
// time, then id (so that two reports of the same rows are the same).
func (l losses) top() ([]Workspace, []Task) {
	ws := make([]Workspace, 0, len(l.workspaces))
	for _, w := range l.workspaces {
		ws = append(ws, *w)
	}
	slices.SortFunc(ws, func(a, b Workspace) int {
		return cmp.Or(cmp.Compare(b.AgentTimeLostSeconds, a.AgentTimeLostSeconds), cmp.Compare(b.HumanOwedSeconds, a.HumanOwedSeconds),
			cmp.Compare(a.WorkspaceID, b.WorkspaceID))
	})
	ts := make([]Task, 0, len(l.tasks))
	for _, t := range l.tasks {
		ts = append(ts, *t)
	}
	slices.SortFunc(ts, func(a, b Task) int {
		return cmp.Or(cmp.Compare(b.AgentTimeLostSeconds, a.AgentTimeLostSeconds), cmp.Compare(b.HumanOwedSeconds, a.HumanOwedSeconds),
			cmp.Compare(a.TaskID, b.TaskID))
	})
	return ws[:min(len(ws), Top)], ts[:min(len(ts), Top)]
}
