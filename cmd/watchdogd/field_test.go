package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// fieldDataset holds situations seen on a running kandev (its own server
// and mock agent), with rows shaped as kandev writes them. want maps each
// session to the findings `watchdogd scan` must report for it.
func fieldDataset(now time.Time) (kandevdb.Dataset, map[string]string) {
	b := kandevdb.NewBuilder(now)
	m := time.Minute
	want := map[string]string{}

	// A launch whose agent never spoke: kandev's "New session started" is
	// its own row, not the agent's output.
	s := b.Session("sess-launch", "Launch", "ws", "RUNNING", 13*m, "")
	s.Turn("turn-launch", 12*m, -1, "").Message("user", "message", "Fix the login page", 12*m, "").
		Message("agent", "status", "New session started", 12*m, "")
	want["sess-launch"] = "never_started"

	// The same after a resume ("Session resumed").
	s = b.Session("sess-resume", "Resume", "ws", "RUNNING", 2*time.Hour, "")
	s.Turn("turn-resume-old", 2*time.Hour, 90*m, "").Message("user", "message", "Start", 2*time.Hour, "").Agent("message", 100*m)
	s.Turn("turn-resume", 15*m, -1, "").Message("user", "message", "Go on", 15*m, "").
		Message("agent", "status", "Session resumed", 15*m, "")
	want["sess-resume"] = "never_started"

	// A reconnect notice after the agent's last output hides no stall.
	s = b.Session("sess-reconnect", "Reconnect", "ws", "RUNNING", 45*m, "")
	s.Turn("turn-reconnect", 40*m, -1, "").Message("user", "message", "Refactor", 40*m, "").Agent("tool_call", 30*m).
		Message("agent", "status", "Agent connection lost — retrying…", 2*m, "")
	want["sess-reconnect"] = "stalled_turn"

	// A restart closed the running turn (completed_at = started_at) with a
	// permission pending: kandev still shows it, but it can no longer be
	// granted. The parked session is what is reported.
	s = b.Session("sess-perm", "Permission", "ws", "WAITING_FOR_INPUT", time.Hour,
		fmt.Sprintf(`{"interrupted_at": %q}`, now.Add(-25*m).Format(time.RFC3339)))
	s.Turn("turn-perm", 30*m, 30*m, "").Message("user", "message", "Clean up", 30*m, "").Agent("tool_call", 29*m).
		Permission("perm-1", "run `rm -rf build/`", "", 28*m)
	b.DS.Turns[len(b.DS.Turns)-1].UpdatedAt = kandevdb.P(b.Ago(25 * m)) // the restart wrote it
	want["sess-perm"] = "interrupted_session"

	// A restart while a follow-up prompt ran: its turn closed with the
	// user's message unanswered, no interrupted_at, no error row.
	s = b.Session("sess-followup", "Follow-up", "ws", "WAITING_FOR_INPUT", 2*time.Hour, "")
	s.Turn("turn-followup-1", 2*time.Hour, 100*m, "").Message("user", "message", "First", 2*time.Hour, "").Agent("message", 101*m)
	s.Turn("turn-followup-2", 20*m, 20*m, "").Message("user", "message", "And now the tests", 20*m, "")
	want["sess-followup"] = "interrupted_session"

	// The same turn cancelled by the user in kandev: nothing was lost.
	s = b.Session("sess-cancelled", "Cancelled", "ws", "WAITING_FOR_INPUT", 2*time.Hour, "")
	s.Turn("turn-cancelled", 20*m, 19*m, "").Message("user", "message", "Never mind", 20*m, "").
		Message("agent", "status", "Turn cancelled by user", 19*m, `{"cancelled": true, "variant": "warning"}`)
	want["sess-cancelled"] = ""

	// kandev closed a tool call with CURRENT_TIMESTAMP on a PostgreSQL role
	// in Asia/Kolkata: its updated_at is 5.5 h ahead. Taken as the last
	// output, it would hide this stall for 5.5 h.
	s = b.Session("sess-future", "Future", "ws", "RUNNING", 45*m, "")
	s.Turn("turn-future", 40*m, -1, "").Message("user", "message", "Build it", 40*m, "").Agent("tool_call", 30*m)
	b.DS.Messages[len(b.DS.Messages)-1].UpdatedAt = b.Ago(-(5*time.Hour + 30*m))
	want["sess-future"] = "stalled_turn"

	// The same while the agent works on: its real output a minute ago is
	// its last, not the value 5.5 h ahead.
	s = b.Session("sess-future-busy", "Future, busy", "ws", "RUNNING", 45*m, "")
	s.Turn("turn-future-busy", 40*m, -1, "").Message("user", "message", "Build it", 40*m, "").Agent("tool_call", 30*m).Agent("tool_call", m)
	b.DS.Messages[len(b.DS.Messages)-2].UpdatedAt = b.Ago(-(5*time.Hour + 30*m))
	want["sess-future-busy"] = ""
	return b.DS, want
}

// TestFieldKandevSituations: `watchdogd scan` on both dialects reports
// kandev's real situations as they are: its own status rows are not the
// agent's output, a permission a restart orphaned is not pending, a
// follow-up prompt a restart dropped is surfaced (not one the user
// cancelled), and a timestamp far in the future is named, never activity.
func TestFieldKandevSituations(t *testing.T) {
	ctx := context.Background()
	ds, want := fieldDataset(demoNow)
	lite, err := kandevdb.CreateSQLite(filepath.Join(t.TempDir(), "kandev.db"), kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := lite.Write(ctx, ds); err != nil {
		t.Fatal(err)
	}
	_ = lite.Close()
	dsn, err := pg.NewDatabase(ctx, "field")
	if err != nil {
		t.Fatal(err)
	}
	pgdb, err := kandevdb.CreatePostgres(ctx, dsn, kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := pgdb.Write(ctx, ds); err != nil {
		t.Fatal(err)
	}
	_ = pgdb.Close()
	for name, url := range map[string]string{"sqlite": lite.URL(), "postgres": dsn} {
		r := watchdogd(t, nil, "scan", "--database-url", url, "--now", demoNow.Format(time.RFC3339), "--output", "json")
		var rep scan.Report
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep) != nil {
			t.Fatalf("%s: exit %d: %s", name, r.code, r.stderr)
		}
		got := map[string][]string{}
		for _, f := range rep.Findings {
			got[f.SessionID] = append(got[f.SessionID], string(f.Kind))
		}
		for session, kind := range want {
			sort.Strings(got[session])
			if g := strings.Join(got[session], ","); g != kind {
				t.Errorf("%s: %s reported %q, want %q", name, session, g, kind)
			}
		}
		for _, s := range rep.Sessions {
			if s.SessionID == "sess-perm" && s.PendingPermission != nil {
				t.Errorf("%s: a permission on a closed turn is reported pending: %+v", name, s.PendingPermission)
			}
		}
		note := "note: 2 kandev row(s) with a timestamp more than thresholds.future_tolerance after the scan (kandev's database clock or time zone?), read as missing: " +
			"task_session_messages/(an update after the scan, turn turn-future), task_session_messages/(an update after the scan, turn turn-future-busy)\n"
		if !strings.Contains(r.stderr, note) {
			t.Errorf("%s: stderr %q lacks %q", name, r.stderr, note)
		}
	}
}

// TestClearedSaysWhatKandevRecorded: a question rejected and a permission
// that expired in kandev clear with those words — in the Slack edit, the
// ledger, and `episodes show` — not as "answered".
func TestClearedSaysWhatKandevRecorded(t *testing.T) {
	b := kandevdb.NewBuilder(time.Now())
	s := b.Session("sess-q", "Pick a driver", "ws-web", "WAITING_FOR_INPUT", time.Hour, "")
	s.Turn("turn-q", 40*time.Minute, -1, "").Agent("tool_call", 35*time.Minute).
		Clarification("p1", "q1", "Driver choice", "Pick A or B?", nil, "pending", 20*time.Minute, nil)
	s = b.Session("sess-p", "Clean build", "ws-web", "RUNNING", time.Hour, "")
	s.Turn("turn-p", 40*time.Minute, -1, "").Agent("tool_call", 35*time.Minute).Permission("perm-1", "run `make clean`", "", 20*time.Minute)
	e := newEnv(t, b.DS, "sqlite", "")
	e.once()
	if n := len(e.slack.Messages()); n != 2 {
		t.Fatalf("%d messages, want the question's and the permission's", n)
	}
	// kandev records the outcomes; the agent goes on working.
	db := e.kandev.DB()
	if _, err := db.Exec(`UPDATE task_session_messages SET metadata = json_set(metadata, '$.status', 'rejected') WHERE type = 'clarification_request';
		UPDATE task_session_messages SET metadata = json_set(metadata, '$.status', 'expired') WHERE type = 'permission_request';
		UPDATE task_session_messages SET updated_at = ? WHERE turn_id = 'turn-p' AND type = 'tool_call'`, kandevdb.TS(time.Now())); err != nil {
		t.Fatal(err)
	}
	e.once()
	want := map[string]string{"sess-q": "rejected in kandev", "sess-p": "expired in kandev (the agent stopped waiting)"}
	for _, m := range e.slack.Messages() {
		if m.Edits != 1 || !strings.Contains(m.Text, "Cleared after") || strings.Contains(m.Text, "answered") {
			t.Errorf("edit %+v", m)
		}
	}
	eps, err := e.ledger().Episodes(context.Background(), false, 10)
	if err != nil || len(eps) != 2 {
		t.Fatalf("episodes %+v %v", eps, err)
	}
	for _, ep := range eps {
		if ep.Resolution != want[ep.SessionID] {
			t.Errorf("%s resolved %q, want %q", ep.SessionID, ep.Resolution, want[ep.SessionID])
		}
		found := false
		for _, m := range e.slack.Messages() {
			found = found || strings.Contains(m.Text, want[ep.SessionID])
		}
		if !found {
			t.Errorf("no Slack edit says %q", want[ep.SessionID])
		}
		r := watchdogd(t, e.environ(), "episodes", "show", "--config", e.cfg, ep.ID)
		if !regexp.MustCompile(`(?m)^state:\s+resolved \S+: ` + regexp.QuoteMeta(want[ep.SessionID]) + `$`).MatchString(r.stdout) {
			t.Errorf("episodes show %s:\n%s", ep.SessionID, r.stdout)
		}
	}
}
