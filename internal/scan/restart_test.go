package scan

import (
	"fmt"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// bootScript is the one message of a boot turn: kandev's resume script.
func bootScript(ago time.Duration, resuming bool) model.Message {
	return agent("script_execution", ago, fmt.Sprintf(`{"script_type": "agent_boot", "is_resuming": %v}`, resuming))
}

// TestBootTurn: a boot turn is closed, holds exactly one message, kandev's
// resume script (agent_boot, is_resuming).
func TestBootTurn(t *testing.T) {
	closed := &model.Turn{ID: "b", StartedAt: ago(time.Minute), CompletedAt: ago(time.Minute), MessageCount: 1}
	cases := []struct {
		name string
		t    *model.Turn
		msgs []model.Message
		want bool
	}{
		{"resume script alone", closed, []model.Message{bootScript(time.Minute, true)}, true},
		// The launch's script is no resume.
		{"launch script", closed, []model.Message{bootScript(time.Minute, false)}, false},
		{"another script", closed, []model.Message{agent("script_execution", time.Minute, `{"script_type": "setup"}`)}, false},
		// More than one message: the turn did something.
		{"two messages", &model.Turn{ID: "b", MessageCount: 2}, []model.Message{bootScript(time.Minute, true), aggregate(time.Minute)}, false},
		{"open", &model.Turn{ID: "b", Open: true, MessageCount: 1}, []model.Message{bootScript(time.Minute, true)}, false},
		{"a user's message", closed, []model.Message{userMessage(time.Minute)}, false},
		{"no turn", nil, nil, false},
	}
	for _, c := range cases {
		if got := BootTurn(c.t, c.msgs); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRestartAt: an abandoned turn's restart instant is its updated_at,
// else its close, else the task's interrupted_at, else its start.
func TestRestartAt(t *testing.T) {
	m := time.Minute
	parked := ago(25 * m)
	cases := []struct {
		name                       string
		started, completed, update time.Duration // ago; -1: missing
		want                       time.Time
	}{
		// A restart closed the turn at its start; updated_at is the restart.
		{"updated_at", 30 * m, 30 * m, 2 * m, ago(2 * m)},
		// updated_at before the close cannot be the restart.
		{"updated before the close", 30 * m, 20 * m, 25 * m, ago(20 * m)},
		// Read as missing (too far ahead: CURRENT_TIMESTAMP on a role
		// outside UTC; or unparseable): the close.
		{"updated missing", 30 * m, 20 * m, -1, ago(20 * m)},
		{"close missing", 30 * m, -1, -1, parked},
		// Every stamp at the turn's start says nothing of when.
		{"all at the start", 30 * m, 30 * m, 30 * m, parked},
		// A restart instant after interrupted_at stands.
		{"after interrupted_at", 30 * m, 30 * m, 20 * m, ago(20 * m)},
	}
	at := func(d time.Duration) time.Time {
		if d < 0 {
			return time.Time{}
		}
		return ago(d)
	}
	for _, c := range cases {
		tu := &model.Turn{StartedAt: at(c.started), CompletedAt: at(c.completed), UpdatedAt: at(c.update)}
		if got := RestartAt(tu, parked); !got.Equal(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if got := RestartAt(&model.Turn{StartedAt: ago(m)}, time.Time{}); !got.Equal(ago(m)) {
		t.Errorf("nothing else known: %v, want the start", got)
	}
}

// restarted is a session a restart left: WAITING_FOR_INPUT, its turn
// started 30m ago and closed at its start, updated_at (the restart) 12m
// ago, with msgs.
func restarted(msgs ...model.Message) model.Session {
	return with(session("WAITING_FOR_INPUT", 30*time.Minute, msgs...), func(s *model.Session) {
		s.Current.Open, s.Current.CompletedAt, s.Current.UpdatedAt = false, s.Current.StartedAt, ago(12*time.Minute)
		s.Current.MessageCount = len(msgs)
	})
}

// resumed puts a boot turn after the session's current turn, as kandev's
// resume writes it: the rule takes it as current; the turn before is read
// as BeforeBoot.
func resumed(bootAgo time.Duration) func(*model.Session) {
	return func(s *model.Session) {
		s.BeforeBoot, s.BeforeBootMessages = s.Current, s.Messages
		s.Current = &model.Turn{ID: "boot", StartedAt: ago(bootAgo), CompletedAt: ago(bootAgo), UpdatedAt: ago(bootAgo), MessageCount: 1}
		s.Messages, s.KandevTurnID = []model.Message{bootScript(bootAgo, true)}, "boot"
	}
}

// TestRestartFindings: what the findings make of a turn a restart
// abandoned, modeled on the rows kandev writes: the session is parked,
// dated from the restart, whatever became of a permission on the turn, until
// a reply or a new turn; a question a person answered counts from the
// answer.
func TestRestartFindings(t *testing.T) {
	m := time.Minute
	opts := Options{Thresholds: DefaultThresholds(), KandevRule: RulePreSpec}
	expired := permissionReq("perm-1", "expired", 29*m)
	cases := []struct {
		name string
		s    model.Session
		want []string
	}{
		// A never-started turn abandoned: parked 12m (the restart), not 30m.
		{"never started, abandoned", restarted(userMessage(30 * m)), []string{"interrupted_session 12m "}},
		// The permission pending at the restart: lost.
		{"permission lost", restarted(userMessage(30*m), aggregate(29*m), permissionReq("perm-1", "pending", 29*m)), []string{"interrupted_session 12m "}},
		// Someone tried to grant it: permission_not_found, kandev marked
		// it expired. The session is still dead.
		{"permission expired after a failed grant", restarted(userMessage(30*m), aggregate(29*m), expired), []string{"interrupted_session 12m "}},
		// kandev's writes after the restart (the tool call it closed, the
		// expired mark) updated rows; none created one: no reply.
		{"kandev's updates are no reply", restarted(userMessage(30*m), with1(aggregate(2*m), func(a *model.Message) { a.CreatedAt = ago(29 * m) }), expired),
			[]string{"interrupted_session 12m "}},
		// The agent replied after the restart: not parked.
		{"a reply", with(restarted(userMessage(30*m), expired), func(s *model.Session) { s.Current.RepliedAt = ago(5 * m) }), []string{}},
		{"a reply of its own row", restarted(userMessage(30*m), agent("script_execution", 5*m, `{"script_type": "build"}`)), []string{}},
		// kandev's status rows after it are no reply.
		{"status rows are no reply", restarted(userMessage(30*m), agent("status", 5*m, `{}`)), []string{"interrupted_session 12m "}},
		// A person cancelled the turn (or watchdogd's cancel_and_nudge did).
		{"cancelled", restarted(userMessage(30*m), agent("status", 12*m, `{"cancelled": true}`)), []string{}},
		// Someone queued input for it: kandev takes queued input at a
		// turn's end, and no turn runs to end. Still dead.
		{"queued", with(restarted(userMessage(30*m)), func(s *model.Session) { s.Queued = 1 }), []string{"interrupted_session 12m "}},
		{"queued, a permission lost", with(restarted(userMessage(30*m), aggregate(29*m), expired), func(s *model.Session) { s.Queued = 2 }),
			[]string{"interrupted_session 12m "}},
		// A detached question is still answerable: the question is reported.
		{"detached question", restarted(userMessage(30*m), clarification("p1", "q1", "pending", 29*m, `, "agent_disconnected": true`)),
			[]string{"unanswered_clarification 29m p1"}},
		// Answered 3m ago (kandev resumes the agent about 3 s later):
		// interrupted_after counts from the answer, so the gap never pages.
		{"question answered, resume under way", restarted(userMessage(30*m),
			with1(clarification("p1", "q1", "answered", 29*m, ""), func(c *model.Message) { c.UpdatedAt = ago(3 * m) })), []string{}},
		// Answered 11m ago and no agent since: parked, from the answer.
		{"question answered, nobody resumed", restarted(userMessage(30*m),
			with1(clarification("p1", "q1", "answered", 29*m, ""), func(c *model.Message) { c.UpdatedAt = ago(11 * m) })),
			[]string{"interrupted_session 11m "}},
		// On SQLite a restart while a follow-up prompt ran closes its turn
		// at the real close (and updated_at with it), sets no
		// interrupted_at, writes no row: the agent's output, then 8m of
		// silence, then the close. Parked since the close.
		{"a follow-up closed quiet", with(session("WAITING_FOR_INPUT", 40*m, userMessage(40*m), agent("tool_call", 20*m, `{}`)), func(s *model.Session) {
			s.Current.Open, s.Current.CompletedAt, s.Current.UpdatedAt, s.Current.MessageCount = false, ago(12*m), ago(12*m), 2
		}), []string{"interrupted_session 12m "}},
		// The restart was 9m ago: under interrupted_after.
		{"too young", with(restarted(userMessage(30*m)), func(s *model.Session) { s.Current.UpdatedAt = ago(9 * m) }), []string{}},
		// A boot turn after the abandoned one (a resume that never got to
		// a new turn): the abandoned turn is judged, still parked.
		{"a boot turn after it", with(restarted(userMessage(30*m), expired), resumed(5*m)), []string{"interrupted_session 12m "}},
		// A question asked on the prompt's turn under a boot turn kandev
		// treats as current: hidden, and reported as such.
		{"a question under a boot turn", with(session("WAITING_FOR_INPUT", 30*m, userMessage(30*m), clarification("p1", "q1", "pending", 20*m, "")),
			both(closedAgo(20*m), resumed(19*m))), []string{"shadowed_clarification 20m p1"}},
		// A turn that finished normally under a boot turn: nothing.
		{"finished under a boot turn", with(session("WAITING_FOR_INPUT", 30*m, userMessage(30*m), aggregate(21*m)),
			both(closedAgo(20*m), resumed(19*m))), []string{}},
	}
	for _, c := range cases {
		if got := findingsOf([]model.Session{c.s}, opts); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: findings %q, want %q", c.name, got, c.want)
		}
	}
}

// TestRestartFindingSays: the finding names the abandoned turn and the
// restart instant, what was lost, and when a question was answered.
func TestRestartFindingSays(t *testing.T) {
	m := time.Minute
	s := restarted(userMessage(30*m), aggregate(29*m), permissionReq("perm-1", "expired", 29*m))
	rep := Findings(&model.Snapshot{Sessions: []model.Session{s}}, Options{Thresholds: DefaultThresholds()}, now)
	if len(rep.Findings) != 1 {
		t.Fatalf("findings %+v", rep.Findings)
	}
	f := rep.Findings[0]
	d := f.Detail
	if !f.SinceTime.Equal(ago(12*m)) || d.AbandonedTurnID != "turn-1" || deref(d.RestartAt) != "2026-11-29T11:48:00Z" ||
		d.Interruption != InterruptionLostPermission || d.LostPermission == nil || d.LostPermission.Status != "expired" || d.AnsweredAt != nil {
		t.Fatalf("finding %+v detail %+v", f, d)
	}
	s = restarted(userMessage(30*m), aggregate(29*m), with1(clarification("p1", "q1", "answered", 29*m, ""), func(c *model.Message) { c.UpdatedAt = ago(11 * m) }))
	d = Findings(&model.Snapshot{Sessions: []model.Session{s}}, Options{Thresholds: DefaultThresholds()}, now).Findings[0].Detail
	if d.Interruption != InterruptionAbandoned || deref(d.AnsweredAt) != "2026-11-29T11:49:00Z" || deref(d.RestartAt) != "2026-11-29T11:48:00Z" {
		t.Fatalf("answered: %+v", d)
	}
}

func with1(m model.Message, f func(*model.Message)) model.Message { f(&m); return m }

// TestAbandoned: the definition of an abandoned turn, case by case.
func TestAbandoned(t *testing.T) {
	m := time.Minute
	turn := func(started, completed time.Duration) *model.Turn {
		return &model.Turn{ID: "t", StartedAt: ago(started), CompletedAt: ago(completed), MessageCount: 2}
	}
	parked := ago(25 * m)
	// The agent's last row comes at the close it asks for (kandev writes
	// streamed text when the turn ends), give or take seconds.
	answered := []model.Message{userMessage(30 * m), aggregate(26 * m)}
	// A follow-up prompt the agent worked on, then went silent.
	silent := []model.Message{userMessage(40 * m), agent("tool_call", 20*m, `{}`)}
	cases := []struct {
		name     string
		t        *model.Turn
		msgs     []model.Message
		parkedAt time.Time
		want     bool
	}{
		// A restart closes the running turn at its start.
		{"closed at its start", turn(30*m, 30*m), answered, time.Time{}, true},
		// The agent finished: closed later, its reply after the prompt.
		{"finished", turn(30*m, 24*m), answered, time.Time{}, false},
		// Closed at or before the task's interrupted_at.
		{"closed before interrupted_at", turn(30*m, 26*m), answered, parked, true},
		{"closed at interrupted_at", turn(30*m, 25*m), answered, parked, true},
		{"closed after interrupted_at", turn(30*m, 24*m), answered, parked, false},
		// Closed with the user's last message unanswered (a follow-up
		// prompt a restart dropped: on SQLite its close is the real one).
		{"last message unanswered", turn(30*m, 20*m), []model.Message{userMessage(30 * m)}, time.Time{}, true},
		// Closed with a permission still pending.
		{"a permission pending", turn(30*m, 20*m), append(answered, permissionReq("p", "pending", 27*m)), time.Time{}, true},
		{"a permission granted", turn(30*m, 24*m), append(answered, permissionReq("p", "approved", 27*m)), time.Time{}, false},
		// Closed quiet: a restart while a follow-up prompt ran closes its
		// turn at the real close on SQLite, sets no interrupted_at, and
		// writes no row: the close comes QuietClose or more after the
		// agent's last activity.
		{"closed quiet", turn(40*m, 12*m), silent, time.Time{}, true},
		{"closed quiet at the bound", turn(40*m, 15*m), silent, time.Time{}, true},
		{"closed under the bound", turn(40*m, 16*m), silent, time.Time{}, false},
		// Activity at an unknown time may be at the close.
		{"activity at an unknown time", turn(40*m, 12*m), []model.Message{userMessage(40 * m), with1(agent("tool_call", 20*m, `{}`), func(a *model.Message) { a.UpdatedAt = time.Time{} })}, time.Time{}, false},
		// The agent's last row asked a person: the silence was theirs.
		{"closed after a question", turn(40*m, 12*m), []model.Message{userMessage(40 * m), clarification("p1", "q1", "answered", 20*m, "")}, time.Time{}, false},
		// No agent activity and no user message: nothing was owed.
		{"nothing on it", turn(40*m, 12*m), nil, time.Time{}, false},
		// Cancelled by a person (or watchdogd's cancel_and_nudge): never.
		{"cancelled at its start", turn(30*m, 30*m), []model.Message{userMessage(30 * m), agent("status", 30*m, `{"cancelled": true}`)}, parked, false},
		// Still open, or a boot turn: never.
		{"open", &model.Turn{ID: "t", Open: true, StartedAt: ago(30 * m)}, []model.Message{userMessage(30 * m)}, time.Time{}, false},
		{"a boot turn", &model.Turn{ID: "b", StartedAt: ago(m), CompletedAt: ago(m), MessageCount: 1}, []model.Message{bootScript(m, true)}, time.Time{}, false},
	}
	for _, c := range cases {
		if got := abandoned(c.t, c.msgs, c.parkedAt, 15*m); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// A stall_after under QuietClose is the bound: a turn stalled when it
	// closed was abandoned.
	if !abandoned(turn(40*m, 17*m), silent, time.Time{}, 2*m) || abandoned(turn(40*m, 19*m), silent, time.Time{}, 2*m) {
		t.Errorf("stall_after 2m: a close 3m after the last activity is abandoned, 1m after is not")
	}
}
