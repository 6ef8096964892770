package kandev_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/scan"
)

// TestFindingsAgreeAcrossDialects: the same rows in SQLite and in
// PostgreSQL give the same report — every session's current turn, facts
// and findings (D9) — for data both dialects read alike (uniformValues).
// The differential test holds each dialect to the rule; this one holds
// what watchdogd makes of a snapshot, message reading included, to one
// answer for both.
func TestFindingsAgreeAcrossDialects(t *testing.T) {
	dbs := openDiffDBs(t)
	rng := rand.New(rand.NewPCG(9, 2026))
	now := time.Date(2026, 8, 22, 11, 0, 0, 0, time.UTC)
	opts := scan.Options{Thresholds: scan.DefaultThresholds(), BaseURL: "http://kandev"}
	findings := 0
	for i := range 200 {
		b := make([]byte, 8+rng.IntN(120))
		for j := range b {
			b[j] = byte(rng.IntN(256))
		}
		ds := diffDataset(b, uniformValues)
		var reports [2][]byte
		for k, d := range dbs {
			rep := scan.Findings(d.snapshotOf(t, ds), opts, now)
			findings += len(rep.Findings)
			var err error
			if reports[k], err = json.Marshal(rep); err != nil {
				t.Fatal(err)
			}
		}
		if string(reports[0]) != string(reports[1]) {
			t.Fatalf("dataset %d: the reports differ\nsqlite:   %s\npostgres: %s", i, reports[0], reports[1])
		}
	}
	if findings == 0 {
		t.Fatal("no dataset gave a finding: the comparison proved nothing")
	}
	t.Logf("%d findings compared", findings/2)
}
