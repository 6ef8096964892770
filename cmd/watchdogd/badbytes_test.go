package main

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

// TestBadBytesWithPostgresLedger: a task title in kandev's SQLite holding a
// NUL and bytes that are not UTF-8, both of which PostgreSQL's text refuses,
// does not stop a PostgreSQL ledger from recording and posting every
// finding (it used to fail every decision); the title shows U+FFFD where
// the bad bytes were. Nor does a pending id too long for an index entry.
func TestBadBytesWithPostgresLedger(t *testing.T) {
	ledgerURL, err := pg.NewDatabase(context.Background(), "badbytes")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ds := world(now)
	b := kandevdb.NewBuilder(now)
	b.Session("sess-bad-bytes", "Fix \xff\xfe login\x00 page", "ws-web", "WAITING_FOR_INPUT", time.Hour, "").
		Turn("turn-bad-bytes", 50*time.Minute, -1, "").
		Clarification("p-bad-bytes", "q-bad-bytes", "Which page?", "Pick one", []kandevdb.QuestionOpt{{ID: "a", Label: "Login"}}, "", 30*time.Minute, nil)
	// A pending id longer than a PostgreSQL index entry may be (2,704
	// bytes, incompressible): the episode's identity is indexed.
	long := make([]byte, 4000)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range long {
		long[i] = "0123456789abcdefghijklmnopqrstuvwxyz"[rng.IntN(36)]
	}
	b.Session("sess-long-id", "Long pending id", "ws-web", "WAITING_FOR_INPUT", time.Hour, "").
		Turn("turn-long-id", 50*time.Minute, -1, "").
		Clarification(string(long), "q-long-id", "Which?", "Pick one", []kandevdb.QuestionOpt{{ID: "a", Label: "A"}}, "", 30*time.Minute, nil)
	ds.Append(b.DS)
	e := newEnv(t, ds, ledgerURL, "")
	e.once()
	e.once()
	if posts := e.exactlyOnce(); posts != 10 {
		t.Fatalf("%d posts, want 10: the world's 8, the bad-bytes question and the long-id one", posts)
	}
	found := false
	for _, m := range e.slack.Messages() {
		found = found || strings.Contains(m.Text, "Fix \uFFFD login\uFFFD page")
	}
	if !found {
		t.Fatal("no post shows the title with U+FFFD for its bad bytes")
	}
}
