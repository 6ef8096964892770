package kandev_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/kandevtime"
	"github.com/watchdogd/watchdogd/internal/model"
)

// The snapshot's sessions statement is the rule hand-tuned for speed: the
// open turns read apart, kandev's view by an index walk that stops at the
// first match, a count of ties that sends a session to a split form, and a
// second walk past a lifecycle turn. The fixture pins chosen cases; this
// test holds the statement to the Go rule (authority.Resolve, which the
// authority package's own differential tests hold to each dialect's
// fragments) on random sessions: stamps that tie, as text or as instants,
// open and completed turns in any order, every kind of flag, turns with and
// without messages, and now and then a malformed value, reported on the
// same turns (those the answer rests on) by each dialect and by both of
// PostgreSQL's paths. The current turn's
// messages are held to the rows as well: the newest plain agent update,
// with updated_at in every shape (two of them unreadable to SQLite's
// julianday), and the rows the rules read whole.

// diffValues are what a generated dataset draws from: timestamps for turns
// (the fourth also ends a turn that ran) and for messages, and turn metadata
// whose last two values are malformed on both dialects (on PostgreSQL they
// send the whole snapshot down the fallback).
type diffValues struct {
	turnStamps, msgStamps []string
	meta                  []*string
}

// mixedValues hold to the rule on each dialect: one instant in several
// shapes (equal on PostgreSQL, ordered as text on SQLite), two message
// shapes SQLite's julianday cannot read, and a duplicate key, which SQLite
// reads first-wins and PostgreSQL's jsonb last-wins.
var mixedValues = diffValues{
	turnStamps: []string{
		"2026-08-22 10:00:00+00:00", "2026-08-22T10:00:00Z", "2026-08-22 10:00:00.5+00:00",
		"2026-08-22 10:00:01+00:00", "2026-08-22 09:59:59.999999+00:00", "2026-08-22 10:00:00",
	},
	msgStamps: []string{
		"2026-08-22 10:00:00+00:00", "2026-08-22T10:00:00Z", "2026-08-22 09:00:00-01:00",
		"2026-08-22 10:00:01.5+00:00", "2026-08-22 10:00:01",
		"2026-08-22 10:00:02+0000", "2026-08-22t10:00:03Z",
	},
	meta: append(append([]*string{}, agreedMeta[:len(agreedMeta)-2]...),
		kandevdb.P(`{"lifecycle_only": true, "lifecycle_only": false}`), kandevdb.P("{"), kandevdb.P("")),
}

// uniformValues are data both dialects must read alike (D9): kandev's one
// usual shape, and metadata they parse the same way.
var uniformValues = diffValues{
	turnStamps: []string{
		"2026-08-22 10:00:00+00:00", "2026-08-22 10:00:00.5+00:00", "2026-08-22 10:00:00.5+00:00",
		"2026-08-22 10:00:01+00:00", "2026-08-22 09:59:59.999999+00:00",
	},
	msgStamps: []string{"2026-08-22 10:00:00+00:00", "2026-08-22 10:00:01.5+00:00", "2026-08-22 10:00:02+00:00"},
	meta:      agreedMeta,
}

var agreedMeta = []*string{
	nil, kandevdb.P("{}"),
	kandevdb.P(`{"lifecycle_only": true}`), kandevdb.P(`{"lifecycle_only": "1"}`), kandevdb.P(`{"lifecycle_only": 1}`),
	kandevdb.P(`{"lifecycle_only": false}`), kandevdb.P(`{"lifecycle_only": "yes"}`),
	kandevdb.P(`{"prompt_dispatch_pending": true}`),
	kandevdb.P(`{"prompt_dispatch_pending": true, "prompt_dispatch_attempted": true}`),
	kandevdb.P(`{"prompt_dispatch_pending": "1", "lifecycle_only": true}`),
	kandevdb.P(`{"runtime_config_snapshot": {"lifecycle_only": true}}`),
	kandevdb.P("{"), kandevdb.P(""),
}

var diffStates = []string{"RUNNING", "WAITING_FOR_INPUT", "IDLE", "STARTING", "CREATED"}

var (
	diffAuthors = []string{"agent", "agent", "user"}
	diffTypes   = []string{"message", "tool_call", "status", "script_execution", "clarification_request", "permission_request", "thinking"}
	// diffMsgMeta: what the rules read of questions, permissions, status
	// notices and boot scripts, drawn for a message of any type.
	diffMsgMeta = []*string{
		nil, nil,
		kandevdb.P(`{"pending_id": "p1", "question_id": "q1", "status": "pending"}`),
		kandevdb.P(`{"pending_id": "p1", "question_id": "q2", "status": "answered"}`),
		kandevdb.P(`{"pending_id": "p2", "question": {"id": "q3", "prompt": "Which?"}}`),
		kandevdb.P(`{"pending_id": "p3", "question_id": "q4", "parent_question": true}`),
		kandevdb.P(`{"pending_id": "perm1", "status": "pending", "tool_call_id": "tc1"}`),
		kandevdb.P(`{"status": "approved"}`),
		kandevdb.P(`{"action_visibility": "running"}`),
		kandevdb.P(`{"script_type": "agent_boot"}`),
		kandevdb.P(`{"script_type": "agent_boot", "is_resuming": true}`),
	}
	diffTaskMeta = []*string{nil, kandevdb.P(`{"interrupted_at": "2026-08-22T10:00:00Z"}`)}
)

// diffDataset builds one to four active sessions from fuzz input, each with
// zero to six turns. Turn ids are unique but not in insertion order, so the
// last key (id descending) is not the table's order.
func diffDataset(shape []byte, v diffValues) kandevdb.Dataset {
	src := kandevdb.NewChoices(shape)
	var ds kandevdb.Dataset
	for si := range 1 + src.Next(4) {
		sid, task := fmt.Sprintf("s%d", si), fmt.Sprintf("task%d", si)
		ds.Tasks = append(ds.Tasks, kandevdb.Task{ID: task, WorkspaceID: "ws", Title: task, Metadata: diffTaskMeta[src.Next(len(diffTaskMeta))]})
		ds.Sessions = append(ds.Sessions, kandevdb.Session{ID: sid, TaskID: task,
			State: diffStates[src.Next(len(diffStates))], IsPrimary: true, StartedAt: kandevdb.P(v.turnStamps[0])})
		for ti := range src.Next(7) {
			tu := kandevdb.Turn{ID: fmt.Sprintf("%s-t%d%d", sid, (ti*7+src.Next(10))%10, ti), SessionID: sid, TaskID: task,
				StartedAt: v.turnStamps[src.Next(len(v.turnStamps))]}
			if c := src.Next(len(v.turnStamps) + 1); c < len(v.turnStamps) {
				tu.CreatedAt = &v.turnStamps[c]
			}
			switch src.Next(3) {
			case 1:
				tu.CompletedAt = kandevdb.P(tu.StartedAt)
			case 2:
				tu.CompletedAt = &v.turnStamps[3]
			}
			// Malformed values are drawn rarely, so that most inputs keep
			// PostgreSQL on the fast statement.
			if m := src.Next(4 * len(v.meta)); m < len(v.meta) {
				tu.Metadata = v.meta[m]
			} else {
				tu.Metadata = v.meta[m%(len(v.meta)-2)]
			}
			ds.Turns = append(ds.Turns, tu)
			for k := range src.Next(4) {
				at := v.msgStamps[src.Next(len(v.msgStamps))]
				ds.Messages = append(ds.Messages, kandevdb.Message{ID: fmt.Sprintf("m-%s-%d", tu.ID, k), SessionID: sid, TaskID: task,
					TurnID: tu.ID, Author: diffAuthors[src.Next(len(diffAuthors))], Type: diffTypes[src.Next(len(diffTypes))],
					Metadata: diffMsgMeta[src.Next(len(diffMsgMeta))], CreatedAt: at, UpdatedAt: at})
			}
		}
	}
	restartShapes(&ds, src, v)
	return ds
}

// want is what the Go rule says of one session.
type want struct {
	current, kandev string
	open            bool
	openTurns       int
	secondOpen      time.Time
	malformed       bool // a turn the answer rests on is malformed
}

func ruleAnswers(d authority.Dialect, ds kandevdb.Dataset) map[string]want {
	hasMsg := turnsWithMessages(ds)
	bySession := map[string][]authority.Turn{}
	for _, tu := range ds.Turns {
		started := tu.StartedAt
		bySession[tu.SessionID] = append(bySession[tu.SessionID], authority.Turn{ID: tu.ID,
			StartedAt: authority.StampOf(d, &started), CreatedAt: authority.StampOf(d, tu.CreatedAt),
			CompletedAt: authority.StampOf(d, tu.CompletedAt), Metadata: tu.Metadata, HasMessages: hasMsg[tu.ID]})
	}
	startedText := map[string]string{}
	for _, tu := range ds.Turns {
		startedText[tu.ID] = tu.StartedAt
	}
	out := map[string]want{}
	for _, s := range ds.Sessions {
		turns := bySession[s.ID]
		res := authority.Resolve(d, turns)
		var w want
		malformed := func(i int) bool {
			_, kind := authority.TurnFlags(d, turns[i].Metadata)
			return kind == authority.Malformed
		}
		if res.Current >= 0 {
			w.current, w.open = turns[res.Current].ID, turns[res.Current].Open()
		}
		if res.Kandev >= 0 {
			w.kandev = turns[res.Kandev].ID
		}
		w.openTurns = len(res.Open)
		for _, i := range append([]int{res.Current, res.Kandev, res.Newest}, res.Open...) {
			w.malformed = w.malformed || i >= 0 && malformed(i)
		}
		if len(res.Open) > 1 {
			w.secondOpen, _ = kandevtime.Parse(startedText[turns[res.Open[1]].ID])
		}
		out[s.ID] = w
	}
	return out
}

// diffDB is one dialect's database, emptied and refilled for each input,
// and a reader kept open on it as the daemon keeps one.
type diffDB struct {
	dialect authority.Dialect
	reset   func(ctx context.Context) error
	db      database
	reader  *kandev.Reader
}

const emptyTables = "DELETE FROM task_session_messages; DELETE FROM task_session_turns; DELETE FROM task_sessions; DELETE FROM tasks"

func openDiffDBs(t testing.TB) []diffDB {
	ctx := context.Background()
	lite, err := kandevdb.CreateSQLite(filepath.Join(t.TempDir(), "kandev.db"), kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lite.Close() })
	dsn, err := pg.NewDatabase(ctx, "kandev")
	if err != nil {
		t.Fatal(err)
	}
	post, err := kandevdb.CreatePostgres(ctx, dsn, kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = post.Close() })
	dbs := []diffDB{
		{dialect: authority.SQLite, db: lite, reset: func(ctx context.Context) error { _, err := lite.DB().ExecContext(ctx, emptyTables); return err }},
		{dialect: authority.Postgres, db: post, reset: func(ctx context.Context) error { _, err := post.Conn().Exec(ctx, emptyTables); return err }},
	}
	for i := range dbs {
		r, err := kandev.Open(ctx, dbs[i].db.URL(), kandev.Options{StallAfter: diffStallAfter})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		dbs[i].reader = r
	}
	return dbs
}

// snapshotOf replaces the database's rows with ds and takes a snapshot.
func (d diffDB) snapshotOf(t *testing.T, ds kandevdb.Dataset) *model.Snapshot {
	t.Helper()
	ctx := context.Background()
	if err := d.reset(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.db.Write(ctx, ds); err != nil {
		t.Fatal(err)
	}
	snap, err := d.reader.Snapshot(ctx)
	if err != nil {
		t.Fatalf("%s: snapshot: %v", d.dialect, err)
	}
	return snap
}

// checkAgainstRule loads ds and compares every session of the snapshot
// with the Go rule's answer.
func checkAgainstRule(t *testing.T, d diffDB, ds kandevdb.Dataset) {
	ctx := context.Background()
	snap := d.snapshotOf(t, ds)
	wants := ruleAnswers(d.dialect, ds)
	if len(snap.Sessions) != len(wants) {
		t.Fatalf("%s: %d sessions, want %d", d.dialect, len(snap.Sessions), len(wants))
	}
	for _, s := range snap.Sessions {
		w := wants[s.ID]
		var got want
		if s.Current != nil {
			got.current, got.open = s.Current.ID, s.Current.Open
		}
		got.kandev, got.openTurns, got.secondOpen = s.KandevTurnID, s.OpenTurns, s.SecondOpenStartedAt
		if got.current != w.current || got.open != w.open || got.kandev != w.kandev || got.openTurns != w.openTurns || !got.secondOpen.Equal(w.secondOpen) {
			t.Errorf("%s (fallback %v) session %s:\n got current=%q open=%v kandev=%q open turns=%d second open=%v\nwant current=%q open=%v kandev=%q open turns=%d second open=%v\nturns:%s",
				d.dialect, snap.Fallback, s.ID, got.current, got.open, got.kandev, got.openTurns, got.secondOpen,
				w.current, w.open, w.kandev, w.openTurns, w.secondOpen, describeTurns(ds, s.ID))
		}
		if s.MalformedMetadata != w.malformed {
			t.Errorf("%s (fallback %v) session %s: malformed metadata reported %v; on the turns the answer rests on %v\nturns:%s",
				d.dialect, snap.Fallback, s.ID, s.MalformedMetadata, w.malformed, describeTurns(ds, s.ID))
		}
		checkMessages(t, d.dialect, ds, s)
		checkRestartReads(t, d.dialect, ds, s)
		// The fence reads one task the same way, right before a delivery:
		// it must see what the scan saw.
		one, err := d.reader.TaskSnapshot(ctx, s.TaskID)
		if err != nil {
			t.Fatalf("%s: task snapshot: %v", d.dialect, err)
		}
		if len(one.Sessions) != 1 || !reflect.DeepEqual(one.Sessions[0], s) {
			t.Errorf("%s session %s: the task's own snapshot (fallback %v) differs from the full one (fallback %v):\n got %+v\nwant %+v",
				d.dialect, s.ID, one.Fallback, snap.Fallback, one.Sessions, s)
		}
	}
}

func describeTurns(ds kandevdb.Dataset, session string) string {
	hasMsg := turnsWithMessages(ds)
	text := func(p *string) string {
		if p == nil {
			return "NULL"
		}
		return fmt.Sprintf("%q", *p)
	}
	out := ""
	for _, tu := range ds.Turns {
		if tu.SessionID == session {
			out += fmt.Sprintf("\n  %s started=%q created=%s completed=%s messages=%v meta=%s",
				tu.ID, tu.StartedAt, text(tu.CreatedAt), text(tu.CompletedAt), hasMsg[tu.ID], text(tu.Metadata))
		}
	}
	return out
}

// FuzzSnapshotAgainstRule runs the snapshot on both dialects against the Go
// rule, and each task's own snapshot (the fence's read) against the full
// one; on PostgreSQL that also sets the fast statement beside the fallback
// when another task's malformed value sent the full snapshot there. Its
// corpus (run by every go test) is the chosen seeds and 150 pseudo-random
// inputs from a fixed seed; make fuzz explores further.
func FuzzSnapshotAgainstRule(f *testing.F) {
	for _, s := range chosenSeeds {
		if !s.holds(diffDataset(s.input, mixedValues)) {
			f.Fatalf("seed %q no longer decodes to that shape", s.name)
		}
		f.Add(s.input)
	}
	rng := rand.New(rand.NewPCG(5, 2026))
	for range 150 {
		b := make([]byte, 8+rng.IntN(120))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		f.Add(b)
	}
	dbs := openDiffDBs(f)
	f.Fuzz(func(t *testing.T, shape []byte) {
		ds := diffDataset(shape, mixedValues)
		for _, d := range dbs {
			checkAgainstRule(t, d, ds)
		}
	})
}

// turnsWithMessages names the turns at least one message belongs to.
func turnsWithMessages(ds kandevdb.Dataset) map[string]bool {
	has := map[string]bool{}
	for _, m := range ds.Messages {
		has[m.TurnID] = true
	}
	return has
}
