package kandev_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// sessionsDataset builds n sessions, each with three turns and messages.
func sessionsDataset(n int) kandevdb.Dataset {
	b := kandevdb.NewBuilder(now)
	for i := 0; i < n; i++ {
		s := b.Session(fmt.Sprintf("s%04d", i), "task", "ws", "RUNNING", time.Hour, "")
		s.Turn(fmt.Sprintf("s%04d-a", i), 50*time.Minute, 40*time.Minute, "").Agent("message", 45*time.Minute)
		s.Turn(fmt.Sprintf("s%04d-b", i), 30*time.Minute, -1, "").Agent("tool_call", 20*time.Minute).
			Clarification("p", "q", "T", "P", nil, "pending", 20*time.Minute, nil)
		s.Turn(fmt.Sprintf("s%04d-c", i), 29*time.Minute, 29*time.Minute, `{"lifecycle_only": true}`)
	}
	return b.DS
}

// restartSessions are n sessions a kandev restart left: each resumed
// into a boot turn after a turn it abandoned (the snapshot reads the
// session's turns to find the abandoned one, and its messages), and each
// abandoned (its newest reply is read).
func restartSessions(n int) kandevdb.Dataset {
	b := kandevdb.NewBuilder(now)
	for i := range n {
		s := b.Session(fmt.Sprintf("r%04d", i), "task", "ws", "WAITING_FOR_INPUT", time.Hour, "")
		s.Turn(fmt.Sprintf("r%04d-a", i), 50*time.Minute, 50*time.Minute, "").Message("user", "message", "Go", 50*time.Minute, "").Agent("tool_call", 45*time.Minute)
		s.Turn(fmt.Sprintf("r%04d-boot", i), 20*time.Minute, 20*time.Minute, "").
			Message("agent", "script_execution", "", 20*time.Minute, `{"script_type": "agent_boot", "is_resuming": true}`)
	}
	return b.DS
}

// TestStatementCountIsFixed: one snapshot runs the same number of statements
// at 1 and at 500 sessions — never one query per session — also when
// sessions need what a restart leaves read.
func TestStatementCountIsFixed(t *testing.T) {
	for _, dc := range dialects {
		t.Run(dc.name, func(t *testing.T) {
			counts := map[int]int{}
			for _, n := range []int{1, 500} {
				ds := sessionsDataset(n)
				ds.Append(restartSessions(n))
				db := load(t, dc, ds, kandevdb.Options{})
				var statements []string
				snap := snapshot(t, db.URL(), kandev.Options{OnStatement: func(q string) { statements = append(statements, q) }})
				if len(snap.Sessions) != 2*n {
					t.Fatalf("%d sessions, want %d", len(snap.Sessions), 2*n)
				}
				for _, s := range snap.Sessions {
					if strings.HasPrefix(s.ID, "r") {
						if b := s.BeforeBoot; b == nil || !strings.HasSuffix(b.ID, "-a") || b.RepliedAt.IsZero() || len(s.BeforeBootMessages) != 2 {
							t.Fatalf("session %s: before its boot turn %+v, messages %+v", s.ID, b, s.BeforeBootMessages)
						}
						continue
					}
					if s.Current == nil || !strings.HasSuffix(s.Current.ID, "-b") || len(s.Messages) != 2 {
						t.Fatalf("session %s: current %+v, %d messages", s.ID, s.Current, len(s.Messages))
					}
				}
				if len(statements) != snap.Statements {
					t.Fatalf("hook saw %d statements, snapshot counted %d", len(statements), snap.Statements)
				}
				counts[n] = len(statements)
			}
			if counts[1] != counts[500] {
				t.Fatalf("statements at 1 session: %d, at 500: %d", counts[1], counts[500])
			}
			t.Logf("%s: %d statements per snapshot", dc.name, counts[1])
		})
	}
}

// TestReadOnly proves the scan's connection cannot write, on both dialects.
func TestReadOnly(t *testing.T) {
	for _, dc := range dialects {
		t.Run(dc.name, func(t *testing.T) {
			db := load(t, dc, sessionsDataset(1), kandevdb.Options{})
			ctx := context.Background()
			r, err := kandev.Open(ctx, db.URL(), kandev.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = r.Close() }()
			for _, q := range []string{
				"INSERT INTO tasks (id, workspace_id, title) VALUES ('evil', 'ws', 'x')",
				"UPDATE task_sessions SET state = 'FAILED'",
				"CREATE TABLE watchdogd_probe (x INTEGER)",
			} {
				if _, err := r.DB().ExecContext(ctx, q); err == nil {
					t.Errorf("%q succeeded on the scan's connection", q)
				}
			}
			if _, err := r.Snapshot(ctx); err != nil {
				t.Fatalf("snapshot after write attempts: %v", err)
			}
		})
	}
}

// TestMalformedMetadataNeverBlindsTheScan: malformed, blank and non-object
// metadata in turns and messages give a complete report on both dialects.
func TestMalformedMetadataNeverBlindsTheScan(t *testing.T) {
	b := kandevdb.NewBuilder(now)
	bad := []string{"", "   ", "{", "not json", `{"lifecycle_only": true`}
	for i, meta := range bad {
		s := b.Session(fmt.Sprintf("bad-turn-%d", i), "task", "ws", "RUNNING", time.Hour, "")
		s.Turn(fmt.Sprintf("bt%d-old", i), 50*time.Minute, 40*time.Minute, "").Agent("message", 45*time.Minute)
		tb := s.Turn(fmt.Sprintf("bt%d", i), 30*time.Minute, -1, "").Agent("message", 20*time.Minute)
		b.DS.Turns[len(b.DS.Turns)-1].Metadata = kandevdb.P(meta)
		_ = tb
	}
	s := b.Session("bad-msgs", "task", "ws", "WAITING_FOR_INPUT", time.Hour, `not json`)
	s.Turn("bm", 30*time.Minute, -1, "").
		Message("agent", "status", "", 5*time.Minute, "{").
		Message("agent", "clarification_request", "q?", 20*time.Minute, "").
		Clarification("p1", "q1", "T", "P", nil, "pending", 20*time.Minute, nil)
	b.DS.Messages[len(b.DS.Messages)-2].Metadata = kandevdb.P("") // blank: kandev's own queries fail on it
	s = b.Session("array-meta", "task", "ws", "RUNNING", time.Hour, "")
	s.Turn("am", 30*time.Minute, -1, `["lifecycle_only"]`).Agent("message", 20*time.Minute)
	for _, dc := range dialects {
		t.Run(dc.name, func(t *testing.T) {
			db := load(t, dc, b.DS, kandevdb.Options{})
			snap := snapshot(t, db.URL(), kandev.Options{})
			if len(snap.Sessions) != len(bad)+2 {
				t.Fatalf("%d sessions, want %d", len(snap.Sessions), len(bad)+2)
			}
			if dc.name == "postgres" && !snap.Fallback {
				t.Error("PostgreSQL should have fallen back to reading metadata as text")
			}
			bads := map[string]bool{}
			for _, r := range snap.Malformed {
				bads[r.Table+"/"+r.ID] = true
			}
			for _, s := range snap.Sessions {
				if s.Current == nil {
					t.Errorf("%s: no current turn", s.ID)
					continue
				}
				switch {
				case strings.HasPrefix(s.ID, "bad-turn-"):
					i := strings.TrimPrefix(s.ID, "bad-turn-")
					if s.Current.ID != "bt"+i || !s.MalformedMetadata || !bads["task_session_turns/bt"+i] {
						t.Errorf("%s: current %s malformed=%v (malformed metadata reads as no flags: still current)", s.ID, s.Current.ID, s.MalformedMetadata)
					}
				case s.ID == "bad-msgs":
					// status, two clarifications, and the newest-agent-update row
					if !s.MalformedMetadata || len(s.Messages) != 4 {
						t.Errorf("%s: malformed=%v messages=%d", s.ID, s.MalformedMetadata, len(s.Messages))
					}
				case s.ID == "array-meta":
					if s.MalformedMetadata || s.Current.ID != "am" {
						t.Errorf("%s: a JSON array is valid metadata with no flags", s.ID)
					}
				}
			}
			if len(snap.Malformed) != len(bad)+2 {
				t.Errorf("malformed rows %v, want %d", snap.Malformed, len(bad)+2)
			}
		})
	}
}

// TestMissingQueuedTable: old kandev databases have no queued_messages.
func TestMissingQueuedTable(t *testing.T) {
	for _, dc := range dialects {
		t.Run(dc.name, func(t *testing.T) {
			db := load(t, dc, sessionsDataset(3), kandevdb.Options{WithoutQueuedTable: true})
			if snap := snapshot(t, db.URL(), kandev.Options{}); len(snap.Sessions) != 3 {
				t.Fatalf("%d sessions", len(snap.Sessions))
			}
		})
	}
}

// TestSchemaCheck: a missing column is one clear error naming it.
func TestSchemaCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kandev.db")
	db, err := kandevdb.CreateSQLite(path, kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// SQLite drops no column an index holds, so kandev's analytics index goes first.
	if _, err := db.DB().Exec("DROP INDEX idx_turns_session_times; ALTER TABLE task_session_turns DROP COLUMN completed_at"); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	_, err = kandev.Open(context.Background(), "sqlite://"+path, kandev.Options{})
	if err == nil || !strings.Contains(err.Error(), "missing task_session_turns.completed_at") {
		t.Fatalf("error %v, want one naming task_session_turns.completed_at", err)
	}
	_, err = kandev.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "nope.db"), kandev.Options{})
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("missing file: %v", err)
	}
}

// TestCurrentTurnMessages: only the current turn's rows are read (older
// turns' pending rows are history), user rows only for when they were
// written, and on SQLite the newest agent update is found across timestamp
// shapes.
func TestCurrentTurnMessages(t *testing.T) {
	b := kandevdb.NewBuilder(now)
	s := b.Session("s", "task", "ws", "RUNNING", time.Hour, "")
	s.Turn("old", 50*time.Minute, 40*time.Minute, "").Clarification("p-old", "q", "T", "P", nil, "pending", 45*time.Minute, nil)
	cur := s.Turn("cur", 30*time.Minute, -1, "").Agent("message", 20*time.Minute).Message("user", "message", "hi", time.Minute, "")
	_ = cur
	// An RFC 3339 value a minute older than a CURRENT_TIMESTAMP-shaped one:
	// as text it sorts after it ('T' > ' '), so only comparing instants
	// finds the newest.
	b.DS.Messages = append(b.DS.Messages,
		kandevdb.Message{ID: "m-space", SessionID: "s", TaskID: "task-s", TurnID: "cur", Author: "agent", Type: "tool_call",
			CreatedAt: "2026-11-29 11:50:00", UpdatedAt: "2026-11-29 11:50:00"},
		kandevdb.Message{ID: "m-tee", SessionID: "s", TaskID: "task-s", TurnID: "cur", Author: "agent", Type: "tool_edit",
			CreatedAt: "2026-11-29T11:49:00Z", UpdatedAt: "2026-11-29T11:49:00Z"},
		kandevdb.Message{ID: "m-bad", SessionID: "s", TaskID: "task-s", TurnID: "cur", Author: "agent", Type: "status",
			CreatedAt: "yesterday", UpdatedAt: "yesterday"},
		// Shapes Go's parser takes and SQLite's julianday does not: they
		// must not drop out of the newest update.
		kandevdb.Message{ID: "m-offset", SessionID: "s", TaskID: "task-s", TurnID: "cur", Author: "agent", Type: "thinking",
			CreatedAt: "2026-11-29 11:55:00+0000", UpdatedAt: "2026-11-29 11:55:00+0000"},
		kandevdb.Message{ID: "m-lower", SessionID: "s", TaskID: "task-s", TurnID: "cur", Author: "agent", Type: "tool_read",
			CreatedAt: "2026-11-29t11:54:00z", UpdatedAt: "2026-11-29t11:54:00z"})
	for _, dc := range dialects[:1] { // mixed and unparseable shapes exist only in SQLite
		db := load(t, dc, b.DS, kandevdb.Options{})
		snap := snapshot(t, db.URL(), kandev.Options{})
		got := snap.Sessions[0]
		var agg *model.Message
		users := 0
		for i, m := range got.Messages {
			switch {
			case m.Author == "user":
				// Read for when it was written, never for its text.
				users++
				if m.Content != "" || m.Meta.Kind != authority.Null || !m.CreatedAt.Equal(now.Add(-time.Minute)) || scan.IsActivity(m) {
					t.Errorf("user row read as %+v, want its id, type and creation only", m)
				}
			case m.Author != "agent":
				t.Errorf("a %s row reached the rules", m.Author)
			}
			if m.Type == "clarification_request" {
				t.Errorf("the older turn's pending question was read")
			}
			if m.Aggregate() {
				agg = &got.Messages[i]
			}
		}
		if users != 1 {
			t.Errorf("%d user rows read, want 1", users)
		}
		if agg == nil || !agg.UpdatedAt.Equal(time.Date(2026, 11, 29, 11, 50, 0, 0, time.UTC)) || agg.Type != "tool_call" {
			t.Fatalf("newest agent update SQLite could order %+v, want 11:50:00 tool_call", agg)
		}
		var newest model.Message
		for _, m := range got.Messages {
			if scan.IsActivity(m) && m.UpdatedAt.After(newest.UpdatedAt) {
				newest = m
			}
		}
		if !newest.UpdatedAt.Equal(time.Date(2026, 11, 29, 11, 55, 0, 0, time.UTC)) || newest.Type != "thinking" {
			t.Fatalf("newest agent activity %+v, want 11:55:00 thinking (offset without a colon)", newest)
		}
		bad := model.RowRef{Table: "task_session_messages", ID: "m-bad"}
		if !slices.Equal(snap.Unparseable, []model.RowRef{bad, bad}) { // created_at and updated_at
			t.Errorf("unparseable timestamps in %v, want both of m-bad's", snap.Unparseable)
		}
	}
}

// TestUnorderableUpdateReadAgain: on SQLite an agent update whose
// updated_at julianday cannot read sends its turn through a second
// messages statement, which weighs it; a NULL one (nothing to weigh) and
// kandev's usual shapes do not.
func TestUnorderableUpdateReadAgain(t *testing.T) {
	ctx := context.Background()
	db, err := kandevdb.CreateSQLite(filepath.Join(t.TempDir(), "kandev.db"), kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if err := db.Write(ctx, sessionsDataset(3)); err != nil {
		t.Fatal(err)
	}
	read := func(updatedAt any) (int, model.Session) {
		t.Helper()
		if _, err := db.DB().ExecContext(ctx, "UPDATE task_session_messages SET updated_at = ? WHERE turn_id = 's0001-b' AND type = 'tool_call'", updatedAt); err != nil {
			t.Fatal(err)
		}
		snap := snapshot(t, db.URL(), kandev.Options{})
		return snap.Statements, snap.Sessions[1]
	}
	usual, _ := read("2026-11-29 11:40:00+00:00")
	if n, _ := read(nil); n != usual {
		t.Errorf("a NULL updated_at ran %d statements, the usual shape %d", n, usual)
	}
	n, s := read("2026-11-29 11:59:00+0000")
	if n != usual+1 {
		t.Errorf("an unorderable updated_at ran %d statements, want %d", n, usual+1)
	}
	var newest time.Time
	for _, m := range s.Messages {
		if scan.IsActivity(m) && m.UpdatedAt.After(newest) {
			newest = m.UpdatedAt
		}
	}
	if want := time.Date(2026, 11, 29, 11, 59, 0, 0, time.UTC); !newest.Equal(want) {
		t.Errorf("newest agent activity %v, want %v", newest, want)
	}
}

// TestPostgresLeastPrivilege: a role that may only SELECT kandev's tables
// can scan.
func TestPostgresLeastPrivilege(t *testing.T) {
	db := load(t, dialects[1], sessionsDataset(2), kandevdb.Options{})
	ctx := context.Background()
	role := fmt.Sprintf("reader_%d", time.Now().UnixNano())
	admin, err := sql.Open("pgx", db.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close() }()
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"GRANT SELECT ON tasks, task_sessions, task_session_turns, task_session_messages, queued_messages TO " + role,
	} {
		if _, err := admin.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	url := strings.Replace(db.URL(), "postgres://postgres@", "postgres://"+role+"@", 1)
	snap := snapshot(t, url, kandev.Options{})
	if len(snap.Sessions) != 2 || snap.Dialect != authority.Postgres {
		t.Fatalf("%d sessions", len(snap.Sessions))
	}
}

func execute(t *testing.T, db database, q string) {
	t.Helper()
	var err error
	switch d := db.(type) {
	case *kandevdb.SQLite:
		_, err = d.DB().Exec(q)
	case *kandevdb.Postgres:
		_, err = d.Conn().Exec(context.Background(), q)
	default:
		t.Fatalf("no way to run a statement on a %T", db)
	}
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
