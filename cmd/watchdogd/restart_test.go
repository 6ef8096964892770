package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
	"github.com/watchdogd/watchdogd/internal/notify/webhook/webhooktest"
)

// What a kandev restart does, through the real binary on both dialects,
// with rows shaped as a running kandev wrote them (docs/architecture.md,
// "Restarts"): the restart closes the running turn at its start, writes
// the turn's updated_at at the restart, and leaves the session
// WAITING_FOR_INPUT; on a first prompt it also sets the task's
// interrupted_at.

// restartHookSecret signs the test webhook.
const restartHookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// restartHook is the config of one webhook at url.
func restartHook(t *testing.T, url string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "hook")
	if err := os.WriteFile(file, []byte(restartHookSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return "webhooks:\n  - {name: hook, url: " + url + ", secret_file: " + file + ", timeout: 1s}\n"
}

// slackText is what a Slack message says, its blocks included.
func slackText(t *testing.T, m slacktest.Message) string {
	t.Helper()
	b, err := json.Marshal(m.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	return m.Text + " " + string(b)
}

// restartTurns is a kandev restart closing turns: each closed at its
// start, its updated_at the restart; the sessions WAITING_FOR_INPUT.
func restartTurns(k kandevOn, at time.Time, turns ...string) {
	for _, id := range turns {
		k.exec(`UPDATE task_session_turns SET completed_at = started_at, updated_at = ? WHERE id = ?`,
			`UPDATE task_session_turns SET completed_at = started_at, updated_at = $1 WHERE id = $2`, at, id)
		k.exec(`UPDATE task_sessions SET state = 'WAITING_FOR_INPUT' WHERE id IN (SELECT task_session_id FROM task_session_turns WHERE id = ?)`,
			`UPDATE task_sessions SET state = 'WAITING_FOR_INPUT' WHERE id IN (SELECT task_session_id FROM task_session_turns WHERE id = $1)`, id)
	}
}

// TestRestartClearsAsAbandoned: never-started and stalled turns that a
// restart abandoned clear as "the turn was abandoned — a kandev restart?"
// (they cleared as "the turn completed": 45 messages edited so across two
// storms) in the Slack edit, the log, the ledger, `episodes show` and the
// webhook's resolved payload.
func TestRestartClearsAsAbandoned(t *testing.T) {
	const abandoned = "the turn was abandoned — a kandev restart?"
	for _, dialect := range kandevDialects {
		t.Run(dialect, func(t *testing.T) {
			now := time.Now().Truncate(time.Second)
			b := kandevdb.NewBuilder(now)
			s := b.Session("sess-never", "Launch", "ws-web", "RUNNING", 13*time.Minute, "")
			s.Turn("turn-never", 12*time.Minute, -1, "").Message("user", "message", "Fix the login page", 12*time.Minute, "").
				Message("agent", "status", "New session started", 12*time.Minute, "")
			s = b.Session("sess-stall", "Refactor", "ws-web", "RUNNING", time.Hour, "")
			s.Turn("turn-stall", 40*time.Minute, -1, "").Message("user", "message", "Refactor", 40*time.Minute, "").Agent("tool_call", 20*time.Minute)
			hook := webhooktest.Start(t, restartHookSecret)
			e, k := newEnvOn(t, dialect, b.DS, restartHook(t, hook.URL)+`policy:
  never_started:
    steps: [{after: 0s, action: slack}, {after: 0s, action: webhook}]
  stalled_turn:
    steps: [{after: 0s, action: slack}, {after: 0s, action: webhook}]
`)
			e.once(k.args...)
			if n := len(e.slack.Messages()); n != 2 {
				t.Fatalf("%d posts, want the never-started turn's and the stall's", n)
			}
			restartTurns(k, time.Now(), "turn-never", "turn-stall")
			k.exec(`UPDATE tasks SET metadata = ? WHERE id = 'task-sess-never'`, `UPDATE tasks SET metadata = $1 WHERE id = 'task-sess-never'`,
				`{"interrupted_at": "`+time.Now().UTC().Format(time.RFC3339)+`"}`)
			r := e.once(k.args...)

			for _, m := range e.slack.Messages() {
				if text := slackText(t, m); m.Edits != 1 || !strings.Contains(text, "Cleared after") || !strings.Contains(text, abandoned) ||
					strings.Contains(text, "the turn completed") {
					t.Errorf("edit %d times: %s", m.Edits, text)
				}
			}
			if n := len(logLines(r.stderr, `"reason":"`+abandoned+`"`)); n != 2 {
				t.Errorf("%d log lines resolving with %q, want 2:\n%s", n, abandoned, strings.Join(logLines(r.stderr, "episode resolved"), "\n"))
			}
			for _, ep := range e.episodes() {
				if ep.Resolution != abandoned {
					t.Errorf("%s resolved %q", ep.SessionID, ep.Resolution)
				}
				show := watchdogd(t, e.environ(), "episodes", "show", "--config", e.cfg, ep.ID)
				if !regexp.MustCompile(`(?m)^state:\s+resolved \S+: ` + regexp.QuoteMeta(abandoned) + `$`).MatchString(show.stdout) {
					t.Errorf("episodes show %s:\n%s", ep.SessionID, show.stdout)
				}
			}
			resolved := 0
			for _, d := range hook.Deliveries() {
				var p struct {
					Event   string
					Episode struct{ Resolution string }
				}
				if err := json.Unmarshal(d.Body, &p); err != nil || !d.Verified {
					t.Fatalf("webhook delivery %s: %v verified %v", d.Body, err, d.Verified)
				}
				if p.Event == "resolved" {
					resolved++
					if p.Episode.Resolution != abandoned {
						t.Errorf("webhook resolution %q", p.Episode.Resolution)
					}
				}
			}
			if resolved != 2 {
				t.Errorf("%d resolved webhooks, want 2", resolved)
			}
		})
	}
}

// TestRestartDeadSessionStaysReported: a restart closed the turn of a
// pending permission (no interrupted_at: a human owed the answer); the
// parked session is reported. Someone then tried to grant it: kandev
// answered permission_not_found and marked the row expired. The session
// is still dead — no new turn, no reply — so the episode stays open (it
// resolved "the session resumed", and nobody was told it was dead); a boot
// turn alone changes nothing; a new turn resolves it and says so. An
// archived task's episode clears as "the task was archived".
func TestRestartDeadSessionStaysReported(t *testing.T) {
	m := time.Minute
	for _, dialect := range kandevDialects {
		t.Run(dialect, func(t *testing.T) {
			now := time.Now().Truncate(time.Second)
			b := kandevdb.NewBuilder(now)
			for _, id := range []string{"sess-perm", "sess-archived"} {
				s := b.Session(id, "Clean up "+id, "ws-web", "WAITING_FOR_INPUT", time.Hour, "")
				s.Turn("turn-"+id, 40*m, 40*m, "").Message("user", "message", "Clean up", 40*m, "").Agent("tool_call", 39*m).
					Permission("perm-"+id, "run `rm -rf build/`", "", 38*m)
				b.DS.Turns[len(b.DS.Turns)-1].UpdatedAt = kandevdb.P(b.Ago(12 * m)) // the restart
			}
			e, k := newEnvOn(t, dialect, b.DS, "")
			e.once(k.args...)
			posts := e.slack.Messages()
			if len(posts) != 2 {
				t.Fatalf("%d posts, want the two parked sessions'", len(posts))
			}
			for _, p := range posts {
				if text := slackText(t, p); !strings.Contains(text, "Permission request lost") || !strings.Contains(text, "closed the turn 12 min ago") {
					t.Errorf("post: %s", text)
				}
			}
			// The grant fails: kandev marks the permission expired.
			k.exec(`UPDATE task_session_messages SET metadata = json_set(metadata, '$.status', 'expired'), updated_at = ? WHERE type = 'permission_request'`,
				`UPDATE task_session_messages SET metadata = jsonb_set(metadata::jsonb, '{status}', '"expired"')::text, updated_at = $1 WHERE type = 'permission_request'`,
				time.Now())
			e.once(k.args...)
			// A resume that wrote its boot turn and no more.
			boot := time.Now()
			k.exec(`INSERT INTO task_session_turns (id, task_session_id, task_id, started_at, created_at, completed_at, metadata, updated_at)
				VALUES ('turn-boot', 'sess-perm', 'task-sess-perm', ?1, ?1, ?1, '{}', ?1)`,
				`INSERT INTO task_session_turns (id, task_session_id, task_id, started_at, created_at, completed_at, metadata, updated_at)
				VALUES ('turn-boot', 'sess-perm', 'task-sess-perm', $1, $1, $1, '{}', $1)`, boot)
			k.exec(`INSERT INTO task_session_messages (id, task_session_id, task_id, turn_id, author_type, type, content, metadata, created_at, updated_at)
				VALUES ('m-boot', 'sess-perm', 'task-sess-perm', 'turn-boot', 'agent', 'script_execution', '', '{"script_type": "agent_boot", "is_resuming": true}', ?1, ?1)`,
				`INSERT INTO task_session_messages (id, task_session_id, task_id, turn_id, author_type, type, content, metadata, created_at, updated_at)
				VALUES ('m-boot', 'sess-perm', 'task-sess-perm', 'turn-boot', 'agent', 'script_execution', '', '{"script_type": "agent_boot", "is_resuming": true}', $1, $1)`, boot)
			e.once(k.args...)
			for _, ep := range e.episodes() {
				if !ep.Open() || ep.Kind != model.KindInterruptedSession {
					t.Fatalf("after the failed grant and a boot turn: %s %s resolved %q", ep.SessionID, ep.Kind, ep.Resolution)
				}
			}
			if n := len(e.slack.Messages()); n != 2 {
				t.Fatalf("%d posts, want still the two", n)
			}

			// A new turn on one, its task archived on the other.
			next := time.Now()
			k.exec(`INSERT INTO task_session_turns (id, task_session_id, task_id, started_at, created_at, metadata, updated_at)
				VALUES ('turn-next', 'sess-perm', 'task-sess-perm', ?1, ?1, '{}', ?1)`,
				`INSERT INTO task_session_turns (id, task_session_id, task_id, started_at, created_at, metadata, updated_at)
				VALUES ('turn-next', 'sess-perm', 'task-sess-perm', $1, $1, '{}', $1)`, next)
			k.exec(`UPDATE tasks SET archived_at = ? WHERE id = 'task-sess-archived'`, `UPDATE tasks SET archived_at = $1 WHERE id = 'task-sess-archived'`, next)
			e.once(k.args...)
			want := map[string]string{"sess-perm": "a new turn started", "sess-archived": "the task was archived"}
			for _, ep := range e.episodes() {
				if ep.Open() || ep.Resolution != want[ep.SessionID] {
					t.Errorf("%s: open %v, resolved %q, want %q", ep.SessionID, ep.Open(), ep.Resolution, want[ep.SessionID])
				}
			}
			for _, p := range e.slack.Messages() {
				text := slackText(t, p)
				if p.Edits != 1 || !strings.Contains(text, want["sess-perm"]) && !strings.Contains(text, want["sess-archived"]) {
					t.Errorf("edit %d times: %s", p.Edits, text)
				}
			}
		})
	}
}

// TestRestartDatedFromTheRestart: a follow-up prompt a restart dropped is
// dated from the restart (the turn's updated_at), not from the turn's start
// (it said "kandev closed the turn 40 min ago" of a restart 12 minutes
// old), in the finding, the message's words and Alertmanager's startsAt;
// an updated_at 5.5 h ahead (CURRENT_TIMESTAMP on a PostgreSQL role in
// Asia/Kolkata) falls back to the turn's close.
func TestRestartDatedFromTheRestart(t *testing.T) {
	m := time.Minute
	for _, dialect := range kandevDialects {
		t.Run(dialect, func(t *testing.T) {
			now := time.Now().Truncate(time.Second)
			b := kandevdb.NewBuilder(now)
			s := b.Session("sess-followup", "Follow-up", "ws-web", "WAITING_FOR_INPUT", 2*time.Hour, "")
			s.Turn("turn-first", 2*time.Hour, 100*m, "").Message("user", "message", "First", 2*time.Hour, "").Agent("message", 101*m)
			s.Turn("turn-dropped", 40*m, 40*m, "").Message("user", "message", "And now the tests", 40*m, "")
			b.DS.Turns[len(b.DS.Turns)-1].UpdatedAt = kandevdb.P(b.Ago(12 * m))
			s = b.Session("sess-skew", "Skewed clock", "ws-web", "WAITING_FOR_INPUT", 2*time.Hour, "")
			s.Turn("turn-skew", 40*m, 11*m, "").Message("user", "message", "Go on", 40*m, "")
			b.DS.Turns[len(b.DS.Turns)-1].UpdatedAt = kandevdb.P(b.Ago(-(5*time.Hour + 30*m)))
			am := newAlertsReceiver(t)
			e, k := newEnvOn(t, dialect, b.DS, `alertmanager:
  urls: [`+am.URL+`]
  timeout: 1s
policy:
  interrupted_session:
    steps: [{after: 0s, action: slack}, {after: 0s, action: alertmanager}]
`)
			r := e.once(k.args...)
			want := map[string]time.Time{"sess-followup": now.Add(-12 * m), "sess-skew": now.Add(-11 * m)}
			words := map[string]string{"sess-followup": "closed the turn 12 min ago", "sess-skew": "closed the turn 11 min ago"}
			for _, ep := range e.episodes() {
				if ep.Kind != model.KindInterruptedSession || !ep.Since.Equal(want[ep.SessionID]) {
					t.Errorf("%s: %s since %v, want %v", ep.SessionID, ep.Kind, ep.Since, want[ep.SessionID])
				}
			}
			for _, p := range e.slack.Messages() {
				text := slackText(t, p)
				session := "sess-followup"
				if strings.Contains(text, "sess-skew") {
					session = "sess-skew"
				}
				if !strings.Contains(text, "Last message never answered") || !strings.Contains(text, words[session]) {
					t.Errorf("%s: %s", session, text)
				}
			}
			am.mu.Lock()
			alerts := append([]map[string]any(nil), am.alerts...)
			am.mu.Unlock()
			if len(alerts) < 2 {
				t.Fatalf("%d alerts, want both sessions'", len(alerts))
			}
			for _, a := range alerts {
				labels, _ := a["labels"].(map[string]any)
				session, _ := labels["session_id"].(string)
				starts, err := time.Parse(time.RFC3339Nano, a["startsAt"].(string))
				if err != nil || !starts.Equal(want[session]) {
					t.Errorf("%s: startsAt %v (%v), want %v", session, a["startsAt"], err, want[session])
				}
			}
			if !strings.Contains(r.stderr, "task_session_turns/turn-skew") {
				t.Errorf("the skewed updated_at is not named:\n%s", r.stderr)
			}
		})
	}
}
