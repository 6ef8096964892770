package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDryRunWritesAndSendsNothing: --dry-run decides and prints, but
// makes no ledger (no file where state.url points, nor beside it), and
// Slack hears nothing; on a ledger a cycle made, it decides from what is
// in it and leaves every file there as it was.
func TestDryRunWritesAndSendsNothing(t *testing.T) {
	e := newEnv(t, world(time.Now()), "sqlite", "")
	for _, args := range [][]string{{"run", "--once", "--dry-run"}, {"run", "--dry-run"}} {
		r := watchdogd(t, e.environ(), append(args, "--config", e.cfg)...)
		if r.code != 0 || !strings.Contains(r.stdout, "would open") || !strings.Contains(r.stdout, "→ Slack C-ops") {
			t.Fatalf("%v: exit %d\n%s\n%s", args, r.code, r.stdout, r.stderr)
		}
		if made := ledgerFiles(t, e); made != "" {
			t.Fatalf("%v made the ledger's files: %s", args, made)
		}
	}
	if n := len(e.slack.Messages()); n != 0 {
		t.Fatalf("%d messages sent", n)
	}
	if acts := e.actions(); len(acts) != 0 {
		t.Fatalf("%d actions written", len(acts))
	}
	e.once()
	posts, before := len(e.slack.Messages()), ledgerFiles(t, e)
	r := watchdogd(t, e.environ(), "run", "--dry-run", "--config", e.cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "9 open episodes") || !strings.Contains(r.stdout, "No new action is due.") {
		t.Fatalf("dry run on the cycle's ledger: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if after := ledgerFiles(t, e); after != before || len(e.slack.Messages()) != posts {
		t.Fatalf("the dry run changed the ledger's files or sent:\nbefore %s\nafter  %s", before, after)
	}
}

// ledgerFiles lists the files of the env's SQLite ledger (the file and
// those beside it), each with its size, time and content's digest; of the
// -shm only that it is there: it is WAL's shared-memory index, which every
// reader writes while another process holds the ledger open (here the
// test's own handle, as a running daemon would).
func ledgerFiles(t *testing.T, e *env) string {
	t.Helper()
	path := strings.TrimPrefix(e.state, "sqlite://")
	matches, err := filepath.Glob(path + "*")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range matches {
		if strings.HasSuffix(m, "-shm") {
			fmt.Fprintf(&b, "%s; ", filepath.Base(m))
			continue
		}
		fi, err := os.Stat(m)
		if err != nil {
			t.Fatal(err)
		}
		body, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %d %s %x; ", filepath.Base(m), fi.Size(), fi.ModTime().Format(time.RFC3339Nano), sha256.Sum256(body))
	}
	return b.String()
}
