package kandev_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// TestFindingsAgreeAcrossDialects: the same rows in SQLite and in
// PostgreSQL give the same report — every session's current turn, facts
// and findings (D9) — for data both dialects read alike (uniformValues).
// The differential test holds each dialect to the rule; this one holds
// what watchdogd makes of a snapshot, message reading included, to one
// answer for both.
//
// One difference is known and left out: among plain agent updates of the
// same millisecond, SQLite's MAX reports the type of the one it meets
// first and PostgreSQL the one with the greatest id (a stall's "last
// activity" label; its instant is the same). Ordering SQLite's ties by id
// would build a string per message, so that one label is blanked when
// such a tie exists.
func TestFindingsAgreeAcrossDialects(t *testing.T) {
	dbs := openDiffDBs(t)
	rng := rand.New(rand.NewPCG(9, 2026))
	now := time.Date(2026, 8, 22, 11, 0, 0, 0, time.UTC)
	opts := scan.Options{Thresholds: scan.DefaultThresholds(), BaseURL: "http://kandev"}
	findings, beforeBoot, abandoned := 0, 0, 0
	for i := range 200 {
		b := make([]byte, 8+rng.IntN(120))
		for j := range b {
			b[j] = byte(rng.IntN(256))
		}
		ds := diffDataset(b, uniformValues)
		var reports [2][]byte
		for k, d := range dbs {
			snap := d.snapshotOf(t, ds)
			rep := scan.Findings(snap, opts, now)
			findings += len(rep.Findings)
			for _, s := range snap.Sessions {
				if s.BeforeBoot != nil {
					beforeBoot++
				}
			}
			for _, f := range rep.Findings {
				if f.Detail != nil && f.Detail.RestartAt != nil {
					abandoned++
				}
				if f.Kind == model.KindStalledTurn && tiedTypes(ds, *f.TurnID) {
					f.Detail.LastActivityType = ""
				}
			}
			var err error
			if reports[k], err = json.Marshal(rep); err != nil {
				t.Fatal(err)
			}
		}
		if string(reports[0]) != string(reports[1]) {
			t.Fatalf("dataset %d: the reports differ\nsqlite:   %s\npostgres: %s", i, reports[0], reports[1])
		}
	}
	if findings == 0 || beforeBoot == 0 || abandoned == 0 {
		t.Fatalf("%d findings, %d sessions read past a boot turn, %d abandoned turns: the comparison proved too little", findings, beforeBoot, abandoned)
	}
	t.Logf("%d findings compared (%d of abandoned turns); %d sessions read past a boot turn", findings/2, abandoned/2, beforeBoot/2)
}

// tiedTypes reports whether the turn's newest plain agent updates share
// one instant and differ in type.
func tiedTypes(ds kandevdb.Dataset, turnID string) bool {
	_, types := newestPlain(ds, turnID)
	return len(types) > 1
}
