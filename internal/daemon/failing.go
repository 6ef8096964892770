package daemon

import (
	"fmt"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevtime"
)

// failing is a run of failed cycles as the page, the API and /readyz tell
// it: since when, how many, whether the scan itself fails (kandev's
// database unread: nothing is being watched) or only what comes after it
// (the ledger, a delivery), and the last error. The zero value is a
// daemon whose last cycle succeeded.
type failing struct {
	since time.Time
	n     int
	scan  bool
	err   string
}

// failing is the run of failures the status is in; with s.mu held.
func (s *status) failing() failing {
	return failing{since: s.failingSince, n: s.failures, scan: s.scanFailing, err: s.lastErr}
}

// on says whether the last cycle failed.
func (f failing) on() bool { return f.n > 0 }

// what names what fails: the scan, or the cycle after a scan that worked.
func (f failing) what() string {
	if f.scan {
		return "scan"
	}
	return "cycle"
}

// words is the run in one line, "" when there is none: "scan failing
// since 2026-12-01 05:20:00 UTC (3 cycles in a row): <the error>".
func (f failing) words() string {
	if !f.on() {
		return ""
	}
	n := "1 cycle"
	if f.n > 1 {
		n = fmt.Sprintf("%d cycles in a row", f.n)
	}
	return fmt.Sprintf("%s failing since %s (%s): %s", f.what(), clock(kandevtime.RFC3339(f.since)), n, f.err)
}

// sinceRFC3339 is the run's start for the API, "" when there is none.
func (f failing) sinceRFC3339() string {
	if !f.on() {
		return ""
	}
	return kandevtime.RFC3339(f.since)
}
