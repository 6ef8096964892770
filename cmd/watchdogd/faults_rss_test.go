//go:build faults && !race

package main

// Peak memory is measured only on a binary built without the race
// detector, whose shadow memory would say nothing about the daemon's.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// maxScanRSS is the peak resident memory `watchdogd scan` may reach over a
// database holding a 10 MiB prompt and a 1 MiB title: half the chart's
// 128 MiB pod, so that one agent's output cannot get the daemon killed.
const maxScanRSS = 64 << 20

// bigValues is one session whose agent wrote huge values: a 1 MiB task
// title, a 10 MiB question prompt (in the row's content and its
// metadata), and 300 options of 4 KiB labels and descriptions.
func bigValues(now time.Time) kandevdb.Dataset {
	b := kandevdb.NewBuilder(now)
	s := b.Session("sess-big", "Big title "+strings.Repeat("t", 1<<20), "ws-web", "WAITING_FOR_INPUT", time.Hour, "")
	opts := make([]kandevdb.QuestionOpt, 300)
	for i := range opts {
		opts[i] = kandevdb.QuestionOpt{ID: fmt.Sprint(i), Label: fmt.Sprintf("option %d ", i) + strings.Repeat("l", 4<<10),
			Description: strings.Repeat("d", 4<<10)}
	}
	s.Turn("turn-big", 50*time.Minute, -1, "").Clarification("p-big", "q-big", "", "Which one? "+strings.Repeat("p", 10<<20), opts, "", 30*time.Minute, nil)
	return b.DS
}

// buildMaxRSS builds testdata/maxrss, through which a peak is measured
// (its doc comment says why a process the test starts cannot tell).
func buildMaxRSS(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "maxrss")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./testdata/maxrss")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build maxrss: %v\n%s", err, out)
	}
	return bin
}

// scanRSS runs `watchdogd scan --output json` over url and returns its
// report and its peak resident memory in bytes (the kernel's figure, taken
// when the process is reaped).
func scanRSS(t *testing.T, maxrss, url string) (scan.Report, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	peak := filepath.Join(t.TempDir(), "maxrss")
	cmd := exec.CommandContext(ctx, maxrss, peak, binary, "scan", "--database-url", url, "--output", "json")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("scan: %v\n%s", err, errb.String())
	}
	var rep scan.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("scan's output is not a report: %v", err)
	}
	b, err := os.ReadFile(peak)
	if err != nil {
		t.Fatal(err)
	}
	kib, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatalf("maxrss wrote %q: %v", b, err)
	}
	return rep, kib << 10
}

// TestFaultBigValuesRSS: over a database holding a 10 MiB prompt, a 1 MiB
// title and hundreds of long options, `watchdogd scan` still reports the
// question, shows each value cut with a visible mark, and peaks under
// maxScanRSS, on SQLite (in the process) and on PostgreSQL.
func TestFaultBigValuesRSS(t *testing.T) {
	ctx := context.Background()
	ds := bigValues(time.Now())
	lite, err := kandevdb.CreateSQLite(filepath.Join(t.TempDir(), "kandev.db"), kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := lite.Write(ctx, ds); err != nil {
		t.Fatal(err)
	}
	_ = lite.Close()
	dsn, err := pg.NewDatabase(ctx, "bigvalues")
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
	maxrss := buildMaxRSS(t)
	figures := []string{}
	for _, db := range []struct{ name, url string }{{"sqlite", lite.URL()}, {"postgres", dsn}} {
		rep, rss := scanRSS(t, maxrss, db.url)
		figures = append(figures, fmt.Sprintf("%s %.1f MiB", db.name, float64(rss)/(1<<20)))
		var q *scan.Finding
		for i, f := range rep.Findings {
			if f.Kind == model.KindUnansweredClarification {
				q = &rep.Findings[i]
			}
		}
		if q == nil || q.Detail == nil || len(q.Detail.Questions) != 1 {
			t.Fatalf("%s: the question is not reported: %+v", db.name, rep.Findings)
		}
		question := q.Detail.Questions[0]
		for _, v := range []struct {
			what, text string
			max        int
		}{{"title", q.TaskTitle, 3000}, {"prompt", question.Prompt, 3000},
			{"an option's label", question.Options[0].Label, 75}, {"an option's description", question.Options[0].Description, 75}} {
			if n := utf8.RuneCountInString(v.text); n != v.max || !strings.HasSuffix(v.text, "… cut") {
				t.Errorf("%s: %s is %d characters, ending %q: want %d, marked as cut", db.name, v.what, n, v.text[max(0, len(v.text)-20):], v.max)
			}
		}
		if n := len(question.Options); n != 100 || question.Options[99].Label != "… cut" {
			t.Errorf("%s: %d options reported, want 100, the last saying more were cut", db.name, n)
		}
		if rss > maxScanRSS {
			t.Errorf("%s: scan peaked at %.1f MiB RSS, want at most %d MiB", db.name, float64(rss)/(1<<20), maxScanRSS>>20)
		}
	}
	figure(t, "scan over a 10 MiB prompt, a 1 MiB title and 300 options of 8 KiB: the question reported, each value cut and marked; peak RSS %s", strings.Join(figures, ", "))
}
