package kandev_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

// TestReaderFollowsKandevUpgrades: kandev migrates its schema under a
// running daemon. A table it adds is read within kandev.ReopenAfter; an index it
// drops fails one read, and the next works; a column it renames fails one
// read, and the next names the column.
func TestReaderFollowsKandevUpgrades(t *testing.T) {
	ctx := context.Background()
	db, err := kandevdb.CreateSQLite(filepath.Join(t.TempDir(), "kandev.db"), kandevdb.Options{WithoutQueuedTable: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	now := time.Now()
	b := kandevdb.NewBuilder(now)
	b.Session("s1", "Fix login", "ws", "WAITING_FOR_INPUT", time.Hour, "").Turn("t1", time.Hour, 50*time.Minute, "")
	if err := db.Write(ctx, b.DS); err != nil {
		t.Fatal(err)
	}
	clock := now
	l := &kandev.Lazy{URL: db.URL(), Now: func() time.Time { return clock }}
	t.Cleanup(func() { _ = l.Close() })
	queued := func() int {
		t.Helper()
		snap, err := l.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Sessions) != 1 {
			t.Fatalf("%d sessions", len(snap.Sessions))
		}
		return snap.Sessions[0].Queued
	}
	if n := queued(); n != 0 {
		t.Fatalf("%d queued before the table exists", n)
	}

	// The upgrade adds queued_messages, and a message is queued.
	if err := db.AddQueuedTable(ctx); err != nil {
		t.Fatal(err)
	}
	q := kandevdb.NewBuilder(now)
	q.Session("s1", "", "", "", 0, "").Queue("go on")
	if err := db.Write(ctx, kandevdb.Dataset{Queued: q.DS.Queued}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(kandev.ReopenAfter - time.Second)
	if n := queued(); n != 0 {
		t.Fatalf("%d queued: the reader was reopened before kandev.ReopenAfter", n)
	}
	clock = clock.Add(time.Second)
	if n := queued(); n != 1 {
		t.Fatalf("%d queued %s after the upgrade, want 1", n, kandev.ReopenAfter)
	}

	// The upgrade drops the index the SQLite probes name.
	if _, err := db.DB().Exec(`DROP INDEX idx_turns_session_times`); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Snapshot(ctx); err == nil || !strings.Contains(err.Error(), "idx_turns_session_times") {
		t.Fatalf("read on the dropped index: %v", err)
	}
	if n := queued(); n != 1 {
		t.Fatalf("%d queued after the reopen", n)
	}

	// The upgrade renames a column watchdogd reads.
	if _, err := db.DB().Exec(`ALTER TABLE tasks RENAME COLUMN title TO name`); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Snapshot(ctx); err == nil {
		t.Fatal("read on the renamed column worked")
	}
	if _, err := l.Snapshot(ctx); err == nil || !strings.Contains(err.Error(), "is missing tasks.title") {
		t.Fatalf("second read: %v, want the schema check naming tasks.title", err)
	}
}
