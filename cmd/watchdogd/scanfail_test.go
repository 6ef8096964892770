package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

// findingsStatus is what /api/v1/findings says of the daemon's health.
type findingsStatus struct {
	LastError    string `json:"last_error"`
	ScanFailing  bool   `json:"scan_failing"`
	FailingSince string `json:"failing_since"`
	LastScanAt   string `json:"last_successful_scan_at"`
}

func (d *daemonProc) findingsStatus(t *testing.T) findingsStatus {
	t.Helper()
	var s findingsStatus
	code, body := d.get("/api/v1/findings")
	if code != 200 || json.Unmarshal([]byte(body), &s) != nil {
		t.Fatalf("/api/v1/findings %d: %.300s", code, body)
	}
	return s
}

// TestScanFailingIsShown: kandev's database becomes unreadable under a
// daemon with nothing open. The status page must not call the sessions
// healthy: it, the API and /readyz (ready after one failure, unready
// after two) say the scan is failing, since when, and why; once the file
// is back, the page is healthy again and the API says no failure.
func TestScanFailingIsShown(t *testing.T) {
	extra, base := daemonConfig(t, "")
	e := newEnv(t, kandevdb.Dataset{}, "sqlite", extra)
	d := e.startDaemon(base)
	d.waitView(t)
	if _, page := d.get("/"); !strings.Contains(page, "looks healthy") || strings.Contains(page, "scan failing") || strings.Contains(page, "The scan is failing") {
		t.Fatalf("a daemon whose scans work, nothing open:\n%s", page)
	}
	_ = e.kandev.Close()
	db := filepath.Join(e.dir, "kandev.db")
	away := func(from, to string) {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Rename(from+suffix, to+suffix); err != nil && (suffix == "" || !os.IsNotExist(err)) {
				t.Fatal(err)
			}
		}
	}
	gone := time.Now()
	away(db, db+".away")
	waitFor(t, 10*time.Second, "the API to say the scan fails", func() bool { return d.findingsStatus(t).ScanFailing })
	api := d.findingsStatus(t)
	since, err := time.Parse(time.RFC3339Nano, api.FailingSince)
	if err != nil || since.Before(gone) || since.After(time.Now()) || !strings.Contains(api.LastError, "kandev database") || api.LastScanAt == "" {
		t.Fatalf("API while kandev is unread (gone at %s): %+v", gone.UTC().Format(time.RFC3339Nano), api)
	}
	_, page := d.get("/")
	words := "scan failing since " + since.UTC().Format("2006-01-02 15:04:05 UTC")
	if strings.Contains(page, "healthy") || !strings.Contains(page, words) || !strings.Contains(page, "The scan is failing") ||
		!strings.Contains(page, "not being watched") {
		t.Fatalf("status page while kandev is unread lacks %q or calls it healthy:\n%s", words, page)
	}
	waitFor(t, 10*time.Second, "/readyz 503", func() bool { code, _ := d.get("/readyz"); return code == 503 })
	if _, ready := d.get("/readyz"); !strings.Contains(ready, words) || !strings.Contains(ready, "cycles in a row): kandev database") {
		t.Fatalf("/readyz lacks %q: %s", words, ready)
	}
	away(db+".away", db)
	waitFor(t, 10*time.Second, "/readyz 200 again", func() bool { code, _ := d.get("/readyz"); return code == 200 })
	waitFor(t, 10*time.Second, "the API to say no failure", func() bool {
		s := d.findingsStatus(t)
		return !s.ScanFailing && s.FailingSince == "" && s.LastError == ""
	})
	if _, page := d.get("/"); !strings.Contains(page, "looks healthy") || strings.Contains(page, "scan failing") || strings.Contains(page, "The scan is failing") {
		t.Fatalf("the page after the file came back:\n%s", page)
	}
	if _, ready := d.get("/readyz"); ready != "ready (leader)\n" {
		t.Fatalf("/readyz after the file came back: %q", ready)
	}
	d.terminate(t)
}
