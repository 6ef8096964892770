package authority_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

// The differential tests hold the Go rule to the real databases: random turn
// sets with random metadata, resolved by the Go resolver in a dialect's mode
// and by that dialect running authority.Fragments, must agree turn for turn
// and flag for flag.

var stamps = []string{
	"2026-08-22 10:00:00+00:00",
	"2026-08-22 10:00:00.5+00:00",
	"2026-08-22 10:00:01+00:00",
	"2026-08-22 09:59:59.999999+00:00",
}

// values are member values (JSON text) the generator draws from.
var values = []string{
	`true`, `1`, `"true"`, `"1"`, `false`, `null`, `0`, `1.0`, `""`, `"false"`, `"0"`, `"yes"`,
	`"TRUE"`, `" true"`, `{}`, `[]`, `["1"]`, `1e0`, `0.1e1`, `10e-1`, `-1`, `"\u0031"`, `"tru\u0065"`,
	`{"lifecycle_only": true}`, `1E+0`, `100e-2`, `2`, `"1 "`, `"t"`,
}

// raws are whole metadata texts (nil is SQL NULL).
var raws = []*string{
	nil, p(""), p("   "), p("{"), p("[1]"), p(`"s"`), p("null"), p("1"), p("{}"),
	p(`{"lifecycle_only": true, "lifecycle_only": false}`), p(`{"lifecycle_only": false, "lifecycle_only": true}`),
	p(`{"lifecycle\u005fonly": "1"}`), p(`{"prompt_dispatch_pending": true`), p("{\"lifecycle_only\": true}\x00junk"),
	p(`{"lifecycle_only": "\u0000"}`), p(`{"lifecycle_only": 1, "x": "\ud800"}`), p(`{"k": 1e131072, "lifecycle_only": 1}`),
	p(strings.Repeat("[", 1001) + strings.Repeat("]", 1001)), p(`{"runtime_config_snapshot": {"lifecycle_only": true}}`),
}

func p(s string) *string { return &s }

type fuzzTurn struct {
	id                 string
	started            string
	created, completed *string
	meta               *string
	messages           bool
}

var flagKeys = []string{authority.KeyDispatchPending, authority.KeyDispatchAttempted, authority.KeyLifecycleOnly}

// decode builds a turn set from fuzz input: shape bytes choose the
// structure, raw is metadata text (or a member value) the fuzzer mutates.
func decode(shape []byte, raw string) []fuzzTurn {
	src := kandevdb.NewChoices(shape)
	n := 1 + src.Next(4)
	turns := make([]fuzzTurn, n)
	for i := range turns {
		t := fuzzTurn{id: fmt.Sprintf("t%d", (i*7+src.Next(10))%10), started: stamps[src.Next(len(stamps))]}
		t.id += fmt.Sprint(i) // unique, but not in insertion order
		if c := src.Next(len(stamps) + 1); c < len(stamps) {
			t.created = &stamps[c]
		}
		switch src.Next(3) {
		case 1:
			t.completed = &t.started
		case 2:
			t.completed = &stamps[2]
		}
		switch src.Next(4) {
		case 0:
			t.meta = p(raw)
		case 1:
			var members []string
			for _, k := range flagKeys {
				if v := src.Next(len(values) + 1); v < len(values) {
					members = append(members, fmt.Sprintf("%q: %s", k, values[v]))
				}
			}
			t.meta = p("{" + strings.Join(members, ", ") + "}")
		case 2:
			t.meta = raws[src.Next(len(raws))]
		case 3:
			t.meta = p(fmt.Sprintf(`{%q: %s}`, flagKeys[src.Next(3)], raw))
		}
		t.messages = src.Next(2) == 1
		turns[i] = t
	}
	return turns
}

func toAuthority(d authority.Dialect, ft []fuzzTurn) []authority.Turn {
	out := make([]authority.Turn, len(ft))
	for i, t := range ft {
		started := t.started
		out[i] = authority.Turn{ID: t.id, StartedAt: authority.StampOf(d, &started), CreatedAt: authority.StampOf(d, t.created),
			CompletedAt: authority.StampOf(d, t.completed), Metadata: t.meta, HasMessages: t.messages}
	}
	return out
}

func toDataset(ft []fuzzTurn) kandevdb.Dataset {
	ds := kandevdb.Dataset{}
	for _, t := range ft {
		ds.Turns = append(ds.Turns, kandevdb.Turn{ID: t.id, SessionID: "s", TaskID: "task", StartedAt: t.started,
			CreatedAt: t.created, CompletedAt: t.completed, Metadata: t.meta})
		if t.messages {
			ds.Messages = append(ds.Messages, kandevdb.Message{ID: "m-" + t.id, SessionID: "s", TaskID: "task", TurnID: t.id, CreatedAt: t.started})
		}
	}
	return ds
}

// seeds are the shared corpus: every value and raw text in a few shapes.
func seeds() [][2]string {
	var out [][2]string
	for i := range values {
		out = append(out,
			[2]string{string([]byte{1, 0, 4, 0, 3, 0, 1, 1, 1, byte(i), 0}), values[i]},
			[2]string{string([]byte{2, 1, 1, 1, 1, 3, 0, 0, 0, 0, 2, 0, 3, 0, 1}), values[i]},
		)
	}
	for i := range raws {
		r := "{}"
		if raws[i] != nil {
			r = *raws[i]
		}
		out = append(out,
			[2]string{string([]byte{1, 0, 4, 2, 0, 1, 2, 0, 2, byte(i), 1}), ""},
			[2]string{string([]byte{1, 3, 0, 0, 3, 2, 2, 0, 0, 0, 0}), r},
		)
	}
	return out
}

type dbEval struct {
	current, kandev string
	flags           map[string][3]bool
	malformed       map[string]bool
}

func evalQueries(d authority.Dialect) (current, kandev, flags string) {
	pred, order := authority.Fragments(d, "tu")
	kpred, korder := authority.KandevFragments(d, "tu")
	current = fmt.Sprintf("SELECT tu.id FROM task_session_turns tu WHERE tu.task_session_id = 's' AND %s ORDER BY %s LIMIT 1", pred, order)
	kandev = fmt.Sprintf("SELECT tu.id FROM task_session_turns tu WHERE tu.task_session_id = 's' AND %s ORDER BY %s LIMIT 1", kpred, korder)
	var cols []string
	for _, k := range flagKeys {
		cols = append(cols, authority.FlagSQL(d, "tu.metadata", k))
	}
	flags = fmt.Sprintf("SELECT %s FROM task_session_turns tu WHERE tu.id = ", strings.Join(cols, ", "))
	return
}

func openSQLite(t testing.TB) *kandevdb.SQLite {
	db, err := kandevdb.CreateSQLite(filepath.Join(t.TempDir(), "kandev.db"), kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func sqliteEval(t testing.TB, db *kandevdb.SQLite, ft []fuzzTurn) dbEval {
	ctx := context.Background()
	if _, err := db.DB().Exec("DELETE FROM task_session_turns; DELETE FROM task_session_messages"); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(ctx, toDataset(ft)); err != nil {
		t.Fatal(err)
	}
	cq, kq, fq := evalQueries(authority.SQLite)
	ev := dbEval{flags: map[string][3]bool{}, malformed: map[string]bool{}}
	one := func(q string) string {
		var id sql.NullString
		if err := db.DB().QueryRow(q).Scan(&id); err != nil && err != sql.ErrNoRows {
			t.Fatalf("%v\n%s", err, q)
		}
		return id.String
	}
	ev.current, ev.kandev = one(cq), one(kq)
	for _, tr := range ft {
		var f [3]bool
		var bad bool
		row := db.DB().QueryRow(fq+"?1", tr.id)
		if err := row.Scan(&f[0], &f[1], &f[2]); err != nil {
			t.Fatal(err)
		}
		if err := db.DB().QueryRow("SELECT metadata IS NOT NULL AND NOT json_valid(metadata) FROM task_session_turns WHERE id = ?", tr.id).Scan(&bad); err != nil {
			t.Fatal(err)
		}
		ev.flags[tr.id], ev.malformed[tr.id] = f, bad
	}
	return ev
}

func goEval(d authority.Dialect, ft []fuzzTurn) dbEval {
	turns := toAuthority(d, ft)
	res := authority.Resolve(d, turns)
	ev := dbEval{flags: map[string][3]bool{}, malformed: map[string]bool{}}
	if res.Current >= 0 {
		ev.current = turns[res.Current].ID
	}
	if res.Kandev >= 0 {
		ev.kandev = turns[res.Kandev].ID
	}
	for _, t := range turns {
		f, kind := authority.TurnFlags(d, t.Metadata)
		ev.flags[t.ID] = [3]bool{f.DispatchPending, f.DispatchAttempted, f.LifecycleOnly}
		ev.malformed[t.ID] = kind == authority.Malformed
	}
	return ev
}

func compare(t testing.TB, d authority.Dialect, ft []fuzzTurn, db, g dbEval) {
	t.Helper()
	if db.current != g.current || db.kandev != g.kandev {
		t.Errorf("%s: database current=%q kandev=%q, Go current=%q kandev=%q\nturns: %s", d, db.current, db.kandev, g.current, g.kandev, describe(ft))
	}
	for id, f := range db.flags {
		if g.flags[id] != f {
			t.Errorf("%s: turn %s flags database=%v Go=%v\nturns: %s", d, id, f, g.flags[id], describe(ft))
		}
		if g.malformed[id] != db.malformed[id] {
			t.Errorf("%s: turn %s malformed database=%v Go=%v\nturns: %s", d, id, db.malformed[id], g.malformed[id], describe(ft))
		}
	}
}

func describe(ft []fuzzTurn) string {
	var b strings.Builder
	for _, t := range ft {
		meta := "NULL"
		if t.meta != nil {
			meta = fmt.Sprintf("%q", *t.meta)
		}
		fmt.Fprintf(&b, "\n  %s started=%s created=%v completed=%v messages=%v meta=%s", t.id, t.started, deref(t.created), deref(t.completed), t.messages, meta)
	}
	return b.String()
}

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return *s
}

// FuzzResolveSQLite is the differential fuzz test of the Go rule (SQLite
// mode) against SQLite itself. make test runs it briefly.
func FuzzResolveSQLite(f *testing.F) {
	for _, s := range seeds() {
		f.Add([]byte(s[0]), s[1])
	}
	db := openSQLite(f)
	f.Fuzz(func(t *testing.T, shape []byte, raw string) {
		ft := decode(shape, raw)
		compare(t, authority.SQLite, ft, sqliteEval(t, db, ft), goEval(authority.SQLite, ft))
	})
}
