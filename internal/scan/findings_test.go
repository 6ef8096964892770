package scan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/model"
)

var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return now.Add(-d) }

func meta(s string) authority.Metadata { return authority.ParseMetadataText(authority.SQLite, s) }

// session builds an active session whose current turn started at turnAgo
// (open unless completed is set).
func session(state string, turnAgo time.Duration, msgs ...model.Message) model.Session {
	return model.Session{
		ID: "s1", TaskID: "t1", TaskTitle: "Fix login", WorkspaceID: "ws", State: state, IsPrimary: true,
		StartedAt: ago(turnAgo + time.Minute), TaskMetadata: meta(`{}`),
		Current:      &model.Turn{ID: "turn-1", Open: true, StartedAt: ago(turnAgo)},
		KandevTurnID: "turn-1", OpenTurns: 1, Messages: msgs,
	}
}

func agent(typ string, updatedAgo time.Duration, metadata string) model.Message {
	return model.Message{ID: fmt.Sprintf("m-%s-%d", typ, updatedAgo), Author: "agent", Type: typ, Meta: meta(metadata),
		CreatedAt: ago(updatedAgo), UpdatedAt: ago(updatedAgo)}
}

// aggregate is the snapshot's "newest plain agent message" row.
func aggregate(updatedAgo time.Duration) model.Message {
	return model.Message{Author: "agent", UpdatedAt: ago(updatedAgo)}
}

func clarification(pendingID, questionID, status string, askedAgo time.Duration, extra string) model.Message {
	m := fmt.Sprintf(`{"pending_id": %q, "question_id": %q, "question": {"id": %q, "title": "Pick A or B?", "options": [{"option_id": "a", "label": "A"}, {"option_id": "b", "label": "B"}]}`, pendingID, questionID, questionID)
	if status != "-" {
		m += fmt.Sprintf(`, "status": %q`, status)
	}
	m += extra + "}"
	return model.Message{ID: "c-" + pendingID + "-" + questionID, Author: "agent", Type: "clarification_request", Meta: meta(m),
		CreatedAt: ago(askedAgo), UpdatedAt: ago(askedAgo)}
}

func permissionReq(pendingID, status string, askedAgo time.Duration) model.Message {
	return model.Message{ID: "p-" + pendingID, Author: "agent", Type: "permission_request", Content: "run rm -rf build/?",
		Meta:      meta(fmt.Sprintf(`{"pending_id": %q, "status": %q, "tool_call_id": "tc-1"}`, pendingID, status)),
		CreatedAt: ago(askedAgo), UpdatedAt: ago(askedAgo)}
}

func with(s model.Session, f func(*model.Session)) model.Session { f(&s); return s }

func completed(s *model.Session) { s.Current.Open = false }

// closedAgo closes the current turn d ago.
func closedAgo(d time.Duration) func(*model.Session) {
	return func(s *model.Session) { s.Current.Open, s.Current.CompletedAt = false, ago(d) }
}

// userMessage is a user-authored row as the reader gives it: when it was
// written, no text.
func userMessage(createdAgo time.Duration) model.Message {
	return model.Message{ID: fmt.Sprintf("u-%d", createdAgo), Author: "user", Type: "message", CreatedAt: ago(createdAgo)}
}

// interruptedAt sets the task's interrupted_at d ago.
func interruptedAgo(d time.Duration) func(*model.Session) {
	return func(s *model.Session) {
		s.TaskMetadata = meta(fmt.Sprintf(`{"interrupted_at": %q}`, ago(d).Format(time.RFC3339)))
	}
}

// both applies fs in order.
func both(fs ...func(*model.Session)) func(*model.Session) {
	return func(s *model.Session) {
		for _, f := range fs {
			f(s)
		}
	}
}

// findingsOf returns "kind since-age" for each finding, sorted.
func findingsOf(sessions []model.Session, opts Options) []string {
	rep := Findings(&model.Snapshot{Sessions: sessions}, opts, now)
	out := []string{}
	for _, f := range rep.Findings {
		out = append(out, fmt.Sprintf("%s %s %s", f.Kind, HumanAge(time.Duration(f.AgeSeconds)*time.Second), deref(f.PendingID)))
	}
	sort.Strings(out)
	return out
}

func TestRules(t *testing.T) {
	defaults := Options{Thresholds: DefaultThresholds(), KandevRule: RulePreSpec, BaseURL: "http://kandev"}
	spec := defaults
	spec.KandevRule = RuleSpec
	cases := []struct {
		name     string
		sessions []model.Session
		opts     Options
		want     []string
	}{
		// stalled_turn: RUNNING, open turn, agent output 20m ago ≥ 15m.
		{"stalled", []model.Session{session("RUNNING", 40*time.Minute, aggregate(20*time.Minute))}, defaults,
			[]string{"stalled_turn 20m "}},
		// Output 10m ago is under the threshold.
		{"not yet stalled", []model.Session{session("RUNNING", 40*time.Minute, aggregate(10*time.Minute))}, defaults, []string{}},
		// kandev's own "Still waiting…" notice is not agent activity.
		{"stall notice is not activity", []model.Session{session("RUNNING", 40*time.Minute, aggregate(30*time.Minute),
			agent("status", 2*time.Minute, `{"action_visibility": "running"}`))}, defaults, []string{"stalled_turn 30m "}},
		// No status row is activity: kandev writes them all itself. A
		// reconnect notice after the agent's last output hides no stall.
		{"reconnect notice is not activity", []model.Session{session("RUNNING", 40*time.Minute, aggregate(30*time.Minute),
			agent("status", 2*time.Minute, `{}`))}, defaults, []string{"stalled_turn 30m "}},
		// kandev's "New session started" at a launch: the agent never spoke.
		{"launch notice is not activity", []model.Session{session("RUNNING", 12*time.Minute,
			agent("status", 12*time.Minute, `{}`))}, defaults, []string{"never_started 12m "}},
		// "Session resumed" at a resume, the session still STARTING.
		{"resume notice is not activity", []model.Session{session("STARTING", 12*time.Minute,
			agent("status", 12*time.Minute, `{}`))}, defaults, []string{"never_started 12m "}},
		// Metadata, even malformed, does not make a status row activity.
		{"malformed status metadata is not activity", []model.Session{session("RUNNING", 40*time.Minute, aggregate(30*time.Minute),
			agent("status", 2*time.Minute, `{"action_visibility": "running"`))}, defaults, []string{"stalled_turn 30m "}},
		// never_started: open turn 12m old, no agent output at all.
		{"never started", []model.Session{session("RUNNING", 12*time.Minute)}, defaults, []string{"never_started 12m "}},
		{"never started, too young", []model.Session{session("STARTING", 8*time.Minute)}, defaults, []string{}},
		// A launch hang: STARTING with no current turn, session 11m old.
		{"launch hang", []model.Session{with(session("STARTING", 10*time.Minute), func(s *model.Session) { s.Current, s.KandevTurnID = nil, "" })},
			defaults, []string{"never_started 11m "}},
		// A WAITING_FOR_INPUT session with an open silent turn is not stalled.
		{"waiting is not stalled", []model.Session{session("WAITING_FOR_INPUT", 40*time.Minute, aggregate(30*time.Minute))}, defaults, []string{}},
		// A question 20m old on kandev's current turn too.
		{"unanswered clarification", []model.Session{session("WAITING_FOR_INPUT", 40*time.Minute,
			clarification("p1", "q1", "pending", 20*time.Minute, ""), clarification("p1", "q2", "", 20*time.Minute, ""))}, defaults,
			[]string{"unanswered_clarification 20m p1"}},
		// Under the threshold.
		{"young clarification", []model.Session{session("WAITING_FOR_INPUT", 40*time.Minute,
			clarification("p1", "q1", "pending", 5*time.Minute, ""))}, defaults, []string{}},
		// kandev's rule picks another turn: the question is hidden there.
		{"shadowed clarification", []model.Session{with(session("WAITING_FOR_INPUT", 80*time.Minute,
			clarification("p1", "q1", "-", 70*time.Minute, "")), func(s *model.Session) { s.KandevTurnID = "boot" })}, defaults,
			[]string{"shadowed_clarification 1h10m p1"}},
		// A question with no current turn (the reader never builds one:
		// it reads messages only for a current turn) is still reported,
		// shadowed since kandev shows another turn; it once panicked.
		{"question without a current turn", []model.Session{with(session("WAITING_FOR_INPUT", 80*time.Minute,
			clarification("p1", "q1", "-", 70*time.Minute, "")), func(s *model.Session) { s.Current, s.KandevTurnID = nil, "boot" })}, defaults,
			[]string{"shadowed_clarification 1h10m p1"}},
		// With kandev.current_turn_rule: spec the two rules coincide.
		{"spec rule: never shadowed", []model.Session{with(session("WAITING_FOR_INPUT", 80*time.Minute,
			clarification("p1", "q1", "-", 70*time.Minute, "")), func(s *model.Session) { s.KandevTurnID = "boot" })}, spec,
			[]string{"unanswered_clarification 1h10m p1"}},
		// An autopilot child asking its parent: not for humans, but still
		// pending, so the RUNNING session is not stalled either.
		{"parent question", []model.Session{session("RUNNING", 40*time.Minute, aggregate(30*time.Minute),
			clarification("p1", "q1", "pending", 30*time.Minute, `, "parent_question": true`))}, defaults, []string{}},
		// A bundle naming no question id is not for humans (still pending).
		{"no question id", []model.Session{session("RUNNING", 40*time.Minute, aggregate(30*time.Minute),
			model.Message{ID: "c", Author: "agent", Type: "clarification_request", Meta: meta(`{"pending_id": "p1"}`), CreatedAt: ago(30 * time.Minute)})},
			defaults, []string{}},
		// A detached bundle is still answerable, also on a completed turn.
		{"detached on completed turn", []model.Session{with(session("WAITING_FOR_INPUT", 40*time.Minute,
			clarification("p1", "q1", "pending", 30*time.Minute, `, "agent_disconnected": true`)), completed)}, defaults,
			[]string{"unanswered_clarification 30m p1"}},
		// Answered and rejected bundles are done.
		{"answered", []model.Session{session("WAITING_FOR_INPUT", 40*time.Minute,
			clarification("p1", "q1", "answered", 30*time.Minute, ""), clarification("p2", "q1", "rejected", 30*time.Minute, ""))},
			defaults, []string{}},
		// A NULL status counts as absent: pending.
		{"null status", []model.Session{session("WAITING_FOR_INPUT", 40*time.Minute,
			model.Message{ID: "c", Author: "agent", Type: "clarification_request", CreatedAt: ago(16 * time.Minute),
				Meta: meta(`{"pending_id": "p1", "question_id": "q1", "status": null}`)})}, defaults,
			[]string{"unanswered_clarification 16m p1"}},
		// The newest permission request is pending.
		{"pending permission", []model.Session{session("RUNNING", 40*time.Minute, aggregate(25*time.Minute),
			permissionReq("perm-1", "pending", 20*time.Minute))}, defaults, []string{"pending_permission 20m perm-1"}},
		// An older pending permission under a newer answered one is history.
		{"permission answered", []model.Session{session("RUNNING", 40*time.Minute, aggregate(2*time.Minute),
			permissionReq("perm-1", "pending", 30*time.Minute), permissionReq("perm-2", "approved", 20*time.Minute))}, defaults, []string{}},
		// Parked by a restart 25m ago, turn completed, nothing queued.
		{"interrupted", []model.Session{with(session("WAITING_FOR_INPUT", 60*time.Minute), func(s *model.Session) {
			completed(s)
			s.TaskMetadata = meta(fmt.Sprintf(`{"interrupted_at": %q}`, ago(25*time.Minute).Format(time.RFC3339)))
		})}, defaults, []string{"interrupted_session 25m "}},
		// Something is queued: kandev will resume it.
		{"interrupted but queued", []model.Session{with(session("WAITING_FOR_INPUT", 60*time.Minute), func(s *model.Session) {
			completed(s)
			s.Queued = 1
			s.TaskMetadata = meta(fmt.Sprintf(`{"interrupted_at": %q}`, ago(25*time.Minute).Format(time.RFC3339)))
		})}, defaults, []string{}},
		// interrupted_at concerns the primary session, not a secondary one.
		{"interrupted applies to the primary session", []model.Session{
			with(session("RUNNING", 5*time.Minute, aggregate(time.Minute)), func(s *model.Session) {
				s.TaskMetadata = meta(fmt.Sprintf(`{"interrupted_at": %q}`, ago(25*time.Minute).Format(time.RFC3339)))
			}),
			with(session("WAITING_FOR_INPUT", 60*time.Minute), func(s *model.Session) {
				completed(s)
				s.ID, s.IsPrimary = "s2", false
				s.TaskMetadata = meta(fmt.Sprintf(`{"interrupted_at": %q}`, ago(25*time.Minute).Format(time.RFC3339)))
			})}, defaults, []string{}},
		// A restart closed the turn while a permission was pending: kandev
		// still shows it, but it can no longer be granted. Not pending;
		// the parked session is reported.
		{"permission on a closed turn", []model.Session{with(session("WAITING_FOR_INPUT", 60*time.Minute,
			permissionReq("perm-1", "pending", 30*time.Minute)), both(completed, interruptedAgo(25*time.Minute)))}, defaults,
			[]string{"interrupted_session 25m "}},
		// The same on a follow-up prompt, where kandev sets no
		// interrupted_at: reported from the turn's close.
		{"permission on a closed follow-up turn", []model.Session{with(session("WAITING_FOR_INPUT", 60*time.Minute,
			userMessage(59*time.Minute), aggregate(40*time.Minute), permissionReq("perm-1", "pending", 30*time.Minute)), closedAgo(25*time.Minute))}, defaults,
			[]string{"interrupted_session 25m "}},
		// A restart dropped a follow-up prompt: the turn closed 20m ago with
		// the user's message and no reply, and kandev shows the session idle.
		{"dropped follow-up prompt", []model.Session{with(session("WAITING_FOR_INPUT", 30*time.Minute,
			userMessage(30*time.Minute)), closedAgo(20*time.Minute))}, defaults, []string{"interrupted_session 20m "}},
		// The agent's earlier reply does not answer a later message.
		{"dropped prompt after an earlier reply", []model.Session{with(session("WAITING_FOR_INPUT", 30*time.Minute,
			userMessage(30*time.Minute), aggregate(28*time.Minute), userMessage(25*time.Minute)), closedAgo(20*time.Minute))}, defaults,
			[]string{"interrupted_session 20m "}},
		// Under interrupted_after (10m): not yet.
		{"dropped prompt, too young", []model.Session{with(session("WAITING_FOR_INPUT", 30*time.Minute,
			userMessage(30*time.Minute)), closedAgo(5*time.Minute))}, defaults, []string{}},
		// The agent replied: an ordinary finished turn.
		{"answered prompt", []model.Session{with(session("WAITING_FOR_INPUT", 30*time.Minute,
			userMessage(30*time.Minute), aggregate(21*time.Minute)), closedAgo(20*time.Minute))}, defaults, []string{}},
		// A reply whose time is unknown is still a reply.
		{"reply at an unknown time", []model.Session{with(session("WAITING_FOR_INPUT", 30*time.Minute,
			userMessage(30*time.Minute), model.Message{Author: "agent", Type: "tool_call"}), closedAgo(20*time.Minute))}, defaults, []string{}},
		// The user cancelled the turn in kandev: nothing was lost.
		{"cancelled by the user", []model.Session{with(session("WAITING_FOR_INPUT", 30*time.Minute,
			userMessage(30*time.Minute), agent("status", 20*time.Minute, `{"cancelled": true, "variant": "warning"}`)), closedAgo(20*time.Minute))}, defaults,
			[]string{}},
		// kandev's cancel row recognised by its text, should its metadata
		// lack the flag.
		{"cancelled by the user, text only", []model.Session{with(session("WAITING_FOR_INPUT", 30*time.Minute,
			userMessage(30*time.Minute), model.Message{ID: "x", Author: "agent", Type: "status", Content: "Turn cancelled by user", Meta: meta(`{}`),
				CreatedAt: ago(20 * time.Minute), UpdatedAt: ago(20 * time.Minute)}), closedAgo(20*time.Minute))}, defaults, []string{}},
		// A close read as missing (too far ahead, or unparseable) is taken
		// as the turn's start, as a restart closes it.
		{"dropped prompt, close unknown", []model.Session{with(session("WAITING_FOR_INPUT", 30*time.Minute,
			userMessage(30*time.Minute)), func(s *model.Session) { s.Current.Open = false })}, defaults, []string{"interrupted_session 30m "}},
		// Something queued waits for a turn's end, and no turn runs: the
		// dropped prompt is still reported.
		{"dropped prompt, something queued", []model.Session{with(session("WAITING_FOR_INPUT", 30*time.Minute,
			userMessage(30*time.Minute)), both(closedAgo(20*time.Minute), func(s *model.Session) { s.Queued = 1 }))}, defaults, []string{"interrupted_session 20m "}},
		// A turn with no user message (started by kandev itself) owes no reply.
		{"closed turn without a user message", []model.Session{with(session("WAITING_FOR_INPUT", 30*time.Minute), closedAgo(20*time.Minute))},
			defaults, []string{}},
		// Agent output at an unknown time (unparseable, or too far in the
		// future) is output: the turn stalled since its start, not never
		// started.
		{"activity at an unknown time", []model.Session{session("RUNNING", 40*time.Minute, model.Message{Author: "agent", Type: "tool_call"})},
			defaults, []string{"stalled_turn 40m "}},
		// Two open eligible conversational turns: the D2 invariant broke.
		{"multiple open turns", []model.Session{with(session("RUNNING", 3*time.Minute, aggregate(time.Minute)), func(s *model.Session) {
			s.OpenTurns, s.SecondOpenStartedAt = 2, ago(3*time.Minute)
		})}, defaults, []string{"multiple_open_turns 3m "}},
		// A future timestamp gives age 0, never a negative age.
		{"future activity", []model.Session{with(session("RUNNING", -time.Hour), func(s *model.Session) {
			s.OpenTurns, s.SecondOpenStartedAt = 2, now.Add(time.Hour)
		})}, defaults, []string{"multiple_open_turns 0s "}},
	}
	for _, c := range cases {
		if got := findingsOf(c.sessions, c.opts); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: findings %q, want %q", c.name, got, c.want)
		}
	}
}

// TestReportShape pins the report's listed JSON fields for one session.
func TestReportShape(t *testing.T) {
	s := with(session("WAITING_FOR_INPUT", 80*time.Minute, aggregate(75*time.Minute),
		clarification("p1", "q1", "pending", 70*time.Minute, ""), clarification("p1", "q2", "pending", 69*time.Minute, "")),
		func(s *model.Session) { s.KandevTurnID = "turn-2" })
	rep := Findings(&model.Snapshot{Sessions: []model.Session{s}}, Options{Thresholds: DefaultThresholds(), BaseURL: "http://localhost:38429/"}, now)
	sr := rep.Sessions[0]
	if sr.CurrentTurn == nil || *sr.CurrentTurn.LastActivityAt != "2026-11-29T10:51:00Z" || *sr.KandevCurrentTurnID != "turn-2" {
		t.Fatalf("session report %+v", sr)
	}
	if len(sr.PendingClarifications) != 1 || sr.PendingClarifications[0].Questions != 2 || *sr.PendingClarifications[0].AskedAt != "2026-11-29T10:50:00Z" {
		t.Fatalf("bundles %+v", sr.PendingClarifications)
	}
	f := rep.Findings[0]
	if f.Kind != model.KindShadowedClarification || f.AgeSeconds != 4200 || f.Link != "http://localhost:38429/t/t1" || *f.TurnID != "turn-1" || *f.PendingID != "p1" {
		t.Fatalf("finding %+v", f)
	}
	if len(f.Detail.Questions) != 2 || f.Detail.Questions[0].Options[1].Label != "B" {
		t.Fatalf("detail %+v", f.Detail)
	}
}

func TestHumanAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		45 * time.Second: "45s", 42 * time.Minute: "42m", 70 * time.Minute: "1h10m", 2 * time.Hour: "2h",
		51 * time.Hour: "2d3h", 48 * time.Hour: "2d",
	} {
		if got := HumanAge(d); got != want {
			t.Errorf("HumanAge(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestWriteJSONMatchesMarshal: the streamed report is the same JSON value
// as encoding/json's, for an empty and a full report.
// TestWriteJSONMatchesMarshal holds the streamed report to the bytes
// json.MarshalIndent gives for the whole report, HTML-escaped characters and
// U+2028 included.
func TestWriteJSONMatchesMarshal(t *testing.T) {
	s := with(session("WAITING_FOR_INPUT", 80*time.Minute, aggregate(75*time.Minute),
		clarification("p1", "q1 <b>&\u2028", "pending", 70*time.Minute, "")), func(s *model.Session) {
		s.KandevTurnID = "turn-2"
		s.TaskTitle = "a <b> & \"c\" é\u2028"
	})
	for _, snap := range []*model.Snapshot{{}, {Sessions: []model.Session{s, with(s, func(s *model.Session) { s.ID = "s2" })}}} {
		rep := Findings(snap, Options{Thresholds: DefaultThresholds(), BaseURL: "http://k"}, now)
		var streamed bytes.Buffer
		if err := WriteJSON(&streamed, rep); err != nil {
			t.Fatal(err)
		}
		want, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if want = append(want, '\n'); !bytes.Equal(streamed.Bytes(), want) {
			t.Fatalf("streamed %s\nwant %s", streamed.String(), want)
		}
	}
}

// TestReportOrder: sessions by id in byte order whatever order the
// snapshot holds them in (PostgreSQL's ORDER BY follows the database's
// collation), findings by (since, kind, session_id), so two reports diff
// cleanly.
func TestReportOrder(t *testing.T) {
	stalled := func(id string, lastAgo time.Duration) model.Session {
		return with(session("RUNNING", time.Hour, aggregate(lastAgo)), func(s *model.Session) { s.ID, s.TaskID = id, "t-"+id })
	}
	for _, tc := range []struct {
		name         string
		in           []model.Session
		wantSessions []string
		wantFindings []string
	}{
		// Already in byte order: kept as is.
		{"sorted", []model.Session{stalled("s-1", 20*time.Minute), stalled("s-2", 30*time.Minute)},
			[]string{"s-1", "s-2"}, []string{"s-2", "s-1"}},
		// A collation that ignores punctuation puts s_2 between s-1 and s-3.
		{"collated", []model.Session{stalled("s-1", 20*time.Minute), stalled("s_2", 40*time.Minute), stalled("s-3", 30*time.Minute)},
			[]string{"s-1", "s-3", "s_2"}, []string{"s_2", "s-3", "s-1"}},
		// Equal since: by kind, then by session.
		{"ties", []model.Session{stalled("b", 20*time.Minute), stalled("a", 20*time.Minute)},
			[]string{"a", "b"}, []string{"a", "b"}},
	} {
		rep := Findings(&model.Snapshot{Sessions: tc.in}, Options{Thresholds: DefaultThresholds(), BaseURL: "http://k"}, now)
		var sessions, findings []string
		for _, s := range rep.Sessions {
			sessions = append(sessions, s.SessionID)
		}
		for _, f := range rep.Findings {
			findings = append(findings, f.SessionID)
		}
		if !reflect.DeepEqual(sessions, tc.wantSessions) || !reflect.DeepEqual(findings, tc.wantFindings) {
			t.Errorf("%s: sessions %v, findings %v; want %v, %v", tc.name, sessions, findings, tc.wantSessions, tc.wantFindings)
		}
	}
}
