package kandev_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/kandevsql"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// bigMetaCase is one message whose metadata is read whole (whole) and,
// in a second database, too big to read whole (big): the same members and
// a large one no rule reads.
type bigMetaCase struct {
	name, typ  string
	whole, big string
}

// padded is meta, a JSON object, with a 70 KiB member no rule reads
// first, so that the cut path must find the others past it.
func padded(meta string) string {
	pad := `{"pad": "` + strings.Repeat("x", 70<<10) + `"`
	if strings.TrimSpace(meta) == "{}" {
		return pad + "}"
	}
	return pad + ", " + strings.TrimPrefix(meta, "{")
}

func bigMetaCases() []bigMetaCase {
	big := strings.Repeat("y", 70<<10)
	objects := []struct{ name, typ, meta string }{
		{"question", "clarification_request", `{"pending_id": "p1", "question_id": "q1", "status": "pending", "question_index": 1,
			"question": {"id": "q1", "title": "Which?", "prompt": "Pick one", "context": "more",
			"options": [{"option_id": "a", "label": "A", "description": "first", "kind": "x"}, {"option_id": "b", "label": "B"}]}}`},
		// Duplicates: SQLite reads the first, PostgreSQL the last.
		{"duplicate status", "clarification_request", `{"pending_id": "p2", "question_id": "q2", "status": "answered", "status": "pending", "question": {"id": "q2", "prompt": "x"}}`},
		{"status not a string", "clarification_request", `{"pending_id": "p3", "question_id": "q3", "status": 5}`},
		{"parent flag", "clarification_request", `{"pending_id": "p4", "question_id": "q4", "parent_question": true}`},
		{"flag as text", "clarification_request", `{"pending_id": "p5", "question_id": "q5", "agent_disconnected": "1"}`},
		// 1e0 is the flag on PostgreSQL (its ->> prints 1), not on SQLite.
		{"flag 1e0", "clarification_request", `{"pending_id": "p6", "question_id": "q6", "agent_disconnected": 1e0}`},
		{"flag 1.0", "clarification_request", `{"pending_id": "p7", "question_id": "q7", "agent_disconnected": 1.0}`},
		// A key spelled with an escape is no flag: the raw text must name it.
		{"escaped flag", "clarification_request", `{"pending_id": "p8", "question_id": "q8", "parent\u005fquestion": true}`},
		{"escaped then plain", "clarification_request", `{"pending_id": "p9", "question_id": "q9", "parent\u005fquestion": false, "parent_question": true}`},
		{"question a string", "clarification_request", `{"pending_id": "p10", "question_id": "q10", "question": "text"}`},
		{"options a string", "clarification_request", `{"pending_id": "p11", "question": {"id": "q11", "prompt": "x", "options": "none"}}`},
		{"option a string", "clarification_request", `{"pending_id": "p12", "question": {"id": "q12", "prompt": "x", "options": [{"label": "a"}, null, "b", 3]}}`},
		{"option number id", "clarification_request", `{"pending_id": "p13", "question": {"id": "q13", "prompt": "x", "options": [{"option_id": 1, "label": "a"}]}}`},
		{"index as text", "clarification_request", `{"pending_id": "p14", "question_id": "q14", "question_index": "2"}`},
		{"big inside", "clarification_request", `{"pending_id": "p15", "question": {"id": "q15", "context": "` + big + `", "prompt": "x",
			"options": [{"label": "a", "more": "` + big + `"}]}}`},
		{"permission", "permission_request", `{"pending_id": "perm1", "status": "pending", "tool_call_id": "tc1",
			"options": [{"option_id": "allow", "name": "Allow", "kind": "allow_once"}], "action_details": {"command": "rm -rf /tmp/x"}}`},
		{"stall notice", "status", `{"action_visibility": "running"}`},
		{"boot script", "script_execution", `{"script_type": "agent_boot", "is_resuming": true}`},
		{"empty", "clarification_request", `{}`},
	}
	var out []bigMetaCase
	for _, o := range objects {
		out = append(out, bigMetaCase{o.name, o.typ, o.meta, padded(o.meta)})
	}
	return out
}

// badBigMetaCases are values that are no JSON object, whole and big.
func badBigMetaCases() []bigMetaCase {
	big := strings.Repeat("z", 70<<10)
	return []bigMetaCase{
		{"array", "clarification_request", `[1]`, `["` + big + `", 1]`},
		{"string", "clarification_request", `"a"`, `"` + big + `"`},
		{"malformed", "clarification_request", `{"pending_id": "p1", "question_id":`, `{"pending_id": "p1", "pad": "` + big + `", "question_id":`},
		// Malformed on PostgreSQL only: jsonb refuses \u0000 and numbers
		// past its numeric range.
		{"nul escape", "clarification_request", `{"pending_id": "p2", "question_id": "q2", "a": "\u0000"}`,
			padded(`{"pending_id": "p2", "question_id": "q2", "a": "\u0000"}`)},
		{"huge number", "clarification_request", `{"pending_id": "p3", "question_id": "q3", "n": 1e1000000}`,
			padded(`{"pending_id": "p3", "question_id": "q3", "n": 1e1000000}`)},
	}
}

// bigMetaDataset is one session per case, its message's metadata whole or
// big.
func bigMetaDataset(cases []bigMetaCase, big bool) kandevdb.Dataset {
	b := kandevdb.NewBuilder(now)
	for i, c := range cases {
		id := fmt.Sprintf("s%02d", i)
		meta := c.whole
		if big {
			meta = c.big
		}
		b.Session(id, "task "+c.name, "ws", "WAITING_FOR_INPUT", time.Hour, "").
			Turn("t-"+id, 50*time.Minute, -1, "").
			Message("agent", c.typ, "content of "+c.name, 30*time.Minute, meta)
	}
	return b.DS
}

// TestBigMetadataReadsAsWhole: message metadata too big to read whole is
// read apart, cut, and reads as it does whole on each dialect: the same
// kind, the same answer for every member the rules read, the same
// malformed rows and the same findings. Once with only objects (on
// PostgreSQL, one statement reads them all) and once with malformed and
// non-object values among them (each is then read on its own).
func TestBigMetadataReadsAsWhole(t *testing.T) {
	for _, set := range []struct {
		name  string
		cases []bigMetaCase
	}{{"objects", bigMetaCases()}, {"with bad values", append(bigMetaCases(), badBigMetaCases()...)}} {
		for _, dc := range dialects {
			t.Run(set.name+"/"+dc.name, func(t *testing.T) {
				whole := snapshot(t, load(t, dc, bigMetaDataset(set.cases, false), kandevdb.Options{}).URL(), kandev.Options{})
				big := snapshot(t, load(t, dc, bigMetaDataset(set.cases, true), kandevdb.Options{}).URL(), kandev.Options{})
				compareBigMeta(t, whole, big, set.cases)
			})
		}
	}
}

func compareBigMeta(t *testing.T, whole, big *model.Snapshot, cases []bigMetaCase) {
	t.Helper()
	if len(whole.Sessions) != len(cases) || len(big.Sessions) != len(cases) {
		t.Fatalf("%d and %d sessions, want %d", len(whole.Sessions), len(big.Sessions), len(cases))
	}
	for i, c := range cases {
		w, b := only(t, whole.Sessions[i]), only(t, big.Sessions[i])
		if w.Meta.Kind != b.Meta.Kind {
			t.Errorf("%s: kind %d big, %d whole", c.name, b.Meta.Kind, w.Meta.Kind)
		}
		for _, key := range kandevsql.MetaMemberNames() {
			ws, wok := w.Meta.String(key)
			bs, bok := b.Meta.String(key)
			if ws != bs || wok != bok || w.Meta.Flag(key) != b.Meta.Flag(key) || decoded(w.Meta, key) != decoded(b.Meta, key) {
				t.Errorf("%s: %s reads %q %v flag %v %s big, %q %v flag %v %s whole", c.name, key,
					bs, bok, b.Meta.Flag(key), decoded(b.Meta, key), ws, wok, w.Meta.Flag(key), decoded(w.Meta, key))
			}
		}
		if whole.Sessions[i].MalformedMetadata != big.Sessions[i].MalformedMetadata {
			t.Errorf("%s: malformed %v big, %v whole", c.name, big.Sessions[i].MalformedMetadata, whole.Sessions[i].MalformedMetadata)
		}
	}
	rows := func(s *model.Snapshot) []string {
		var out []string
		for _, r := range s.Malformed {
			out = append(out, r.String())
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(rows(whole), rows(big)) {
		t.Errorf("malformed rows %v big, %v whole", rows(big), rows(whole))
	}
	opts := scan.Options{Thresholds: scan.DefaultThresholds()}
	wr, _ := json.Marshal(scan.Findings(whole, opts, now).Findings)
	br, _ := json.Marshal(scan.Findings(big, opts, now).Findings)
	if string(wr) != string(br) {
		t.Errorf("findings differ\n big:  %s\nwhole: %s", br, wr)
	}
}

// only is a session's one message row.
func only(t *testing.T, s model.Session) model.Message {
	t.Helper()
	for _, m := range s.Messages {
		if !m.Aggregate() {
			return m
		}
	}
	t.Fatalf("session %s: no message read", s.ID)
	return model.Message{}
}

// decoded is a member's value as encoding/json reads it (its text may be
// written differently once cut), or the error it gives; the question as
// internal/scan decodes it, the members it leaves out left out.
func decoded(m authority.Metadata, key string) string {
	raw, ok := m.Raw(key)
	if !ok {
		return "absent"
	}
	var v any = new(any)
	if key == "question" {
		v = new(struct {
			ID, Title, Prompt string
			Options           []struct {
				ID                 string `json:"option_id"`
				Label, Description string
			}
		})
	}
	if err := json.Unmarshal([]byte(raw), v); err != nil {
		return "error"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestBigValuesAreCut: a title, a prompt, a permission's title and
// options past the limits come back cut and marked, the same on both
// dialects, whether the metadata holding them is read whole or apart.
func TestBigValuesAreCut(t *testing.T) {
	long := func(c string, n int) string { return strings.Repeat(c, n) }
	var opts []kandevdb.QuestionOpt
	for i := range 150 {
		opts = append(opts, kandevdb.QuestionOpt{ID: fmt.Sprint(i), Label: "é" + long("l", 200), Description: long("d", 200)})
	}
	b := kandevdb.NewBuilder(now)
	for _, size := range []int{10 << 10, 200 << 10} { // metadata read whole, and apart
		id := fmt.Sprint("s", size)
		tb := b.Session(id, long("t", 5000), "ws", "WAITING_FOR_INPUT", time.Hour, "").Turn("t-"+id, 50*time.Minute, -1, "")
		tb.Clarification("p-"+id, "q-"+id, long("T", 4000), long("p", size), opts, "", 30*time.Minute, nil)
		tb.Permission("perm-"+id, long("r", size), "", 20*time.Minute)
	}
	var reports []string
	for _, dc := range dialects {
		snap := snapshot(t, load(t, dc, b.DS, kandevdb.Options{}).URL(), kandev.Options{})
		rep := scan.Findings(snap, scan.Options{Thresholds: scan.DefaultThresholds()}, now)
		if len(rep.Findings) != 4 {
			t.Fatalf("%s: %d findings, want a question and a permission per session", dc.name, len(rep.Findings))
		}
		for _, f := range rep.Findings {
			cut(t, dc.name+" "+f.Key()+" title", f.TaskTitle, model.MaxText)
			switch f.Kind {
			case model.KindUnansweredClarification:
				q := f.Detail.Questions[0]
				cut(t, dc.name+" "+f.Key()+" question title", q.Title, model.MaxText)
				cut(t, dc.name+" "+f.Key()+" prompt", q.Prompt, model.MaxText)
				cut(t, dc.name+" "+f.Key()+" label", q.Options[0].Label, model.MaxOptionText)
				cut(t, dc.name+" "+f.Key()+" description", q.Options[0].Description, model.MaxOptionText)
				if len(q.Options) != model.MaxOptions || q.Options[model.MaxOptions-1] != (scan.Option{Label: model.CutMark}) {
					t.Errorf("%s %s: %d options, the last %+v: want %d, the last the mark", dc.name, f.Key(), len(q.Options), q.Options[len(q.Options)-1], model.MaxOptions)
				}
			case model.KindPendingPermission:
				cut(t, dc.name+" "+f.Key()+" permission", f.Detail.Permission, model.MaxText)
			}
		}
		out, _ := json.Marshal(rep.Findings)
		reports = append(reports, string(out))
	}
	if reports[0] != reports[1] {
		t.Errorf("the dialects disagree:\nsqlite:   %s\npostgres: %s", reports[0], reports[1])
	}
}

// cut checks that s was cut to n characters and says so.
func cut(t *testing.T, what, s string, n int) {
	t.Helper()
	if got := utf8.RuneCountInString(s); got != n || !strings.HasSuffix(s, model.CutMark) {
		t.Errorf("%s: %d characters ending %q, want %d ending %q", what, got, s[max(0, len(s)-12):], n, model.CutMark)
	}
}

// TestCutMetadataKeepsWhatRulesRead: every metadata member internal/scan
// reads (Meta.String, Meta.Flag, Meta.Raw) is one the cut metadata keeps,
// or a rule would read it as absent on a message with big metadata.
func TestCutMetadataKeepsWhatRulesRead(t *testing.T) {
	files, err := filepath.Glob("../scan/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("scan's sources: %v %v", files, err)
	}
	kept := map[string]bool{}
	for _, k := range kandevsql.MetaMemberNames() {
		kept[k] = true
	}
	reads := regexp.MustCompile(`\.Meta\.(?:String|Flag|Raw)\("([^"]+)"\)`)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range reads.FindAllStringSubmatch(string(src), -1) {
			n++
			if !kept[m[1]] {
				t.Errorf("%s reads metadata member %q, which the cut metadata drops (kandev's metaMembers)", f, m[1])
			}
		}
	}
	if n < 10 {
		t.Fatalf("found %d metadata reads in internal/scan; the pattern no longer matches how rules read metadata", n)
	}
}
