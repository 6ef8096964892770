package cycle

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
)

func TestNewRows(t *testing.T) {
	a := model.RowRef{Table: "task_session_turns", ID: "a"}
	b := model.RowRef{Table: "task_session_messages", ID: "b"}
	sameIDOtherTable := model.RowRef{Table: "task_session_messages", ID: "a"}
	for _, tc := range []struct {
		name      string
		seen      rowsSeen
		rows      []model.RowRef
		wantFresh []model.RowRef
	}{
		// The first cycle logs every bad row.
		{"first sight", nil, []model.RowRef{a, b}, []model.RowRef{a, b}},
		// A row still bad on the next cycle is not logged again.
		{"still bad", rowsSeen{a: true}, []model.RowRef{a, b}, []model.RowRef{b}},
		// Nothing new: nothing to log.
		{"all seen", rowsSeen{a: true, b: true}, []model.RowRef{b, a}, nil},
		// A row read twice in one snapshot is one row.
		{"duplicate in snapshot", nil, []model.RowRef{a, a}, []model.RowRef{a}},
		// Rows are told apart by table as well as id.
		{"same id, other table", rowsSeen{a: true}, []model.RowRef{a, sameIDOtherTable}, []model.RowRef{sameIDOtherTable}},
		// All rows repaired: nothing logged, and the set empties.
		{"repaired", rowsSeen{a: true}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fresh, next := newRows(tc.seen, tc.rows)
			if !slices.Equal(fresh, tc.wantFresh) {
				t.Errorf("fresh %v, want %v", fresh, tc.wantFresh)
			}
			for _, r := range tc.rows {
				if !next[r] {
					t.Errorf("next lacks %v", r)
				}
			}
			if len(next) > len(tc.rows) {
				t.Errorf("next %v keeps rows this snapshot did not have", next)
			}
		})
	}
}

// TestMalformedRowsLoggedOnce: a turn whose metadata kandev cannot parse is
// logged with its id on the first cycle, not on the next, and again once it
// was repaired and broke anew; a turn without an id, by its session. Real
// SQLite file, real reader.
func TestMalformedRowsLoggedOnce(t *testing.T) {
	b := kandevdb.NewBuilder(time.Now())
	s := b.Session("s1", "Fix login", "ws", "RUNNING", time.Hour, "")
	s.Turn("turn-bad", 40*time.Minute, -1, `{"lifecycle_only": tru`).Agent("tool_call", 30*time.Minute)
	c, _, _, db := testCycleDB(t, b.DS, nil)
	core, logs := observer.New(zapcore.WarnLevel)
	c.Log = zap.New(core)
	ctx := context.Background()
	// taken returns this cycle's lines about malformed rows (TakeAll on the
	// unfiltered logs, so that each cycle starts empty).
	taken := func() []observer.LoggedEntry {
		var out []observer.LoggedEntry
		for _, e := range logs.TakeAll() {
			if strings.Contains(e.Message, "malformed metadata") {
				out = append(out, e)
			}
		}
		return out
	}
	cycle := func() int {
		t.Helper()
		if _, err := c.Run(ctx); err != nil {
			t.Fatal(err)
		}
		return len(taken())
	}
	setMeta := func(meta string) {
		t.Helper()
		if _, err := db.DB().Exec(`UPDATE task_session_turns SET metadata = ? WHERE id = 'turn-bad'`, meta); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	entries := taken()
	if len(entries) != 1 {
		t.Fatalf("%d log lines on the first cycle, want 1", len(entries))
	}
	ids, _ := entries[0].ContextMap()["ids"].([]any)
	if len(ids) != 1 || ids[0] != "task_session_turns/turn-bad" {
		t.Fatalf("logged ids %v", entries[0].ContextMap()["ids"])
	}
	if n := cycle(); n != 0 {
		t.Fatalf("%d log lines on the second cycle, want 0", n)
	}
	setMeta("{}")
	if n := cycle(); n != 0 {
		t.Fatalf("%d log lines after the repair, want 0", n)
	}
	setMeta("not json")
	if n := cycle(); n != 1 {
		t.Fatalf("%d log lines after it broke again, want 1", n)
	}
	// A row without an id (SQLite admits one) is named by what it
	// belongs to.
	if _, err := db.DB().Exec(`UPDATE task_session_turns SET metadata = '{}', id = NULL WHERE id = 'turn-bad'`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if entries = taken(); len(entries) != 1 {
		t.Fatalf("%d log lines for a turn without an id, want 1", len(entries))
	}
	if ids, _ := entries[0].ContextMap()["ids"].([]any); len(ids) != 1 || ids[0] != "task_session_turns/(NULL id, session s1)" {
		t.Fatalf("logged ids %v", entries[0].ContextMap()["ids"])
	}
}

// TestUnparseableTimestampsLogged: a turn whose started_at is in no shape
// kandev writes cannot be found stalled or never started; the cycle says
// so by row, once, and the gauge counts the value while it stays. Real
// SQLite file, real reader.
func TestUnparseableTimestampsLogged(t *testing.T) {
	b := kandevdb.NewBuilder(time.Now())
	b.Session("s1", "Fix login", "ws", "RUNNING", time.Hour, "").Turn("turn-when", 40*time.Minute, -1, "")
	c, _, m, db := testCycleDB(t, b.DS, nil)
	core, logs := observer.New(zapcore.WarnLevel)
	c.Log = zap.New(core)
	run := func(startedAt string) (lines []observer.LoggedEntry) {
		t.Helper()
		if _, err := db.DB().Exec(`UPDATE task_session_turns SET started_at = ? WHERE id = 'turn-when'`, startedAt); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, e := range logs.TakeAll() {
			if strings.Contains(e.Message, "no shape kandev writes") {
				lines = append(lines, e)
			}
		}
		return lines
	}
	lines := run("yesterday")
	if len(lines) != 1 {
		t.Fatalf("%d log lines on the first cycle, want 1", len(lines))
	}
	if ids, _ := lines[0].ContextMap()["ids"].([]any); len(ids) != 1 || ids[0] != "task_session_turns/turn-when" {
		t.Fatalf("logged ids %v", lines[0].ContextMap()["ids"])
	}
	if n := len(run("yesterday")); n != 0 || testutil.ToFloat64(m.UnparseableTimestamps) != 1 {
		t.Fatalf("second cycle: %d log lines, gauge %v; want none and 1", n, testutil.ToFloat64(m.UnparseableTimestamps))
	}
	if n := len(run(kandevdb.TS(time.Now().Add(-40 * time.Minute)))); n != 0 || testutil.ToFloat64(m.UnparseableTimestamps) != 0 {
		t.Fatalf("after the repair: %d log lines, gauge %v; want none and 0", n, testutil.ToFloat64(m.UnparseableTimestamps))
	}
}

// TestNoteBadRows: scan's note names each row once (a row can hold two
// bad timestamps), and a long list by its first rows and a count.
func TestNoteBadRows(t *testing.T) {
	row := func(i int) model.RowRef { return model.RowRef{Table: "task_session_turns", ID: fmt.Sprint("t", i)} }
	var many []model.RowRef
	for i := range maxLoggedRows + 3 {
		many = append(many, row(i))
	}
	for _, tc := range []struct {
		name string
		snap model.Snapshot
		want string
	}{
		{"none", model.Snapshot{}, ""},
		{"a row twice", model.Snapshot{Unparseable: []model.RowRef{row(1), row(1)}},
			"note: 1 kandev row(s) with a timestamp in no shape kandev writes, read as missing: task_session_turns/t1\n"},
		{"both kinds", model.Snapshot{Malformed: []model.RowRef{{Table: "task_sessions", Of: "NULL id, task k"}}, Unparseable: []model.RowRef{row(2)}},
			"note: 1 kandev row(s) kandev itself cannot read (malformed metadata, read as no flags; or a NULL id): task_sessions/(NULL id, task k)\n" +
				"note: 1 kandev row(s) with a timestamp in no shape kandev writes, read as missing: task_session_turns/t2\n"},
		{"more than a line holds", model.Snapshot{Malformed: many},
			fmt.Sprintf("note: %d kandev row(s) kandev itself cannot read (malformed metadata, read as no flags; or a NULL id): task_session_turns/t0, ", maxLoggedRows+3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			NoteBadRows(&b, &tc.snap)
			got := b.String()
			if tc.name == "more than a line holds" { // the rows between are t1…t98
				if !strings.HasPrefix(got, tc.want) || !strings.HasSuffix(got, fmt.Sprintf("task_session_turns/t%d, and 3 more\n", maxLoggedRows-1)) {
					t.Errorf("got %q, want the first %d rows and 3 more", got, maxLoggedRows)
				}
				return
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
