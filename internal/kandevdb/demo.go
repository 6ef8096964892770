package kandevdb

import (
	"fmt"
	"time"
)

// Demo is the dataset `watchdogd demo` scans: one session per finding kind,
// healthy sessions that must stay quiet, and history that must not count.
func Demo(now time.Time) Dataset {
	b := NewBuilder(now)
	m := time.Minute
	ab := []QuestionOpt{{"a", "Keep the session cookie", "Smaller change"}, {"b", "Move to JWT", "Matches the mobile app"}}

	// stalled_turn: output stopped 42 minutes ago; kandev's own "Still
	// waiting…" notice since then is not the agent's activity.
	s := b.Session("sess-stalled", "Fix login redirect", "ws-web", "RUNNING", 55*m, "")
	s.Turn("turn-stalled", 50*m, -1, "").Agent("message", 48*m).Agent("tool_call", 42*m).
		Message("agent", "status", "Still waiting for the agent…", 37*m, `{"action_visibility": "running"}`)

	// never_started: the turn opened 12 minutes ago; only the boot script ran.
	s = b.Session("sess-never", "Add dark mode toggle", "ws-web", "RUNNING", 13*m, "")
	s.Turn("turn-never", 12*m, -1, "").Message("agent", "script_execution", "boot", 12*m, `{"script_type": "agent_boot", "is_resuming": false}`)

	// never_started: a launch hang, STARTING for 14 minutes with no turn.
	b.Session("sess-launch", "Migrate billing exports", "ws-ops", "STARTING", 14*m, "")

	// unanswered_clarification: two questions waiting 35 minutes.
	s = b.Session("sess-question", "Refactor auth middleware", "ws-web", "WAITING_FOR_INPUT", 3*time.Hour, "")
	old := s.Turn("turn-question-old", 2*time.Hour, 100*m, "")
	old.Clarification("p-old", "q-old", "Old question", "Superseded history, never answered", nil, "pending", 110*m, nil)
	s.Turn("turn-question", 45*m, -1, "").Agent("message", 40*m).
		Clarification("p-auth", "q1", "Session storage", "Keep the session cookie or move to JWT?", ab, "pending", 35*m, map[string]any{"question_index": 0, "question_total": 2}).
		Clarification("p-auth", "q2", "Token lifetime", "How long should a login last?", []QuestionOpt{{"1d", "One day", ""}, {"30d", "Thirty days", ""}}, "", 35*m, map[string]any{"question_index": 1, "question_total": 2})

	// shadowed_clarification: a resume wrote an unmarked lifecycle turn after
	// the real turn opened; released kandev treats it as current and hides
	// the question asked on the real turn 70 minutes ago.
	s = b.Session("sess-shadowed", "Upgrade Postgres driver", "ws-ops", "WAITING_FOR_INPUT", 90*m, "")
	s.Turn("turn-real", 80*m, -1, "").Agent("tool_call", 75*m).
		Clarification("p-pg", "q-pg", "Driver choice", "Pick A or B?", []QuestionOpt{{"a", "pgx", ""}, {"b", "lib/pq", ""}}, "pending", 70*m, nil)
	s.Turn("turn-boot", 79*m, 79*m, "").Message("agent", "script_execution", "boot", 79*m, `{"script_type": "agent_boot", "is_resuming": true}`)

	// pending_permission: waiting 20 minutes to run a command.
	s = b.Session("sess-permission", "Clean build scripts", "ws-ops", "RUNNING", 40*m, "")
	s.Turn("turn-permission", 30*m, -1, "").Agent("tool_call", 22*m).Permission("perm-1", "run `rm -rf build/`", "pending", 20*m)

	// interrupted_session: parked by a kandev restart 25 minutes ago.
	s = b.Session("sess-parked", "Write release notes", "ws-docs", "WAITING_FOR_INPUT", 2*time.Hour,
		fmt.Sprintf(`{"interrupted_at": %q}`, now.Add(-25*m).UTC().Format(time.RFC3339)))
	s.Turn("turn-parked", 60*m, 26*m, "").Agent("message", 27*m)

	// multiple_open_turns: an older turn never closed.
	s = b.Session("sess-two-open", "Index search results", "ws-web", "RUNNING", 40*m, "")
	s.Turn("turn-open-old", 30*m, -1, "").Agent("message", 29*m)
	s.Turn("turn-open-new", 5*m, -1, "").Agent("tool_call", time.Minute)

	// Healthy: working right now.
	s = b.Session("sess-busy", "Update README badges", "ws-docs", "RUNNING", 20*m, "")
	s.Turn("turn-busy", 10*m, -1, "").Agent("tool_call", time.Minute)
	// Healthy: resting between turns, question answered.
	s = b.Session("sess-idle", "Triage flaky tests", "ws-web", "WAITING_FOR_INPUT", 3*time.Hour, "")
	s.Turn("turn-idle", 2*time.Hour, 90*m, "").
		Clarification("p-done", "q-done", "Which suite?", "Which suite first?", nil, "answered", 100*m, nil)
	// Healthy: input queued while its agent works; kandev takes it at the
	// turn's end. (Queued input does not revive a session a restart left
	// dead: no turn runs to end.)
	s = b.Session("sess-queued", "Bump dependencies", "ws-ops", "RUNNING", 2*time.Hour, "")
	s.Turn("turn-queued", 60*m, -1, "").Agent("tool_call", 2*m)
	s.Queue("continue please")
	// Healthy: an autopilot child waiting on its parent agent.
	s = b.Session("sess-child", "Autopilot: split PR", "ws-web", "RUNNING", 60*m, "")
	s.Turn("turn-child", 50*m, -1, "").Agent("message", 45*m).
		Clarification("p-child", "q-child", "Parent?", "Which branch, parent?", nil, "pending", 40*m, map[string]any{"parent_question": true})

	// Not active: a finished session with a stale pending question, and an
	// archived task's silent session.
	s = b.Session("sess-done", "Old migration", "ws-ops", "COMPLETED", 30*time.Hour, "")
	s.Turn("turn-done", 29*time.Hour, 28*time.Hour, "").Clarification("p-stale", "q-stale", "Stale", "Never answered", nil, "pending", 29*time.Hour, nil)
	s = b.Session("sess-archived", "Archived experiment", "ws-ops", "RUNNING", 5*time.Hour, "")
	b.DS.Tasks[len(b.DS.Tasks)-1].ArchivedAt = P(b.Ago(4 * time.Hour))
	s.Turn("turn-archived", 4*time.Hour, -1, "").Agent("message", 4*time.Hour)
	return b.DS
}
