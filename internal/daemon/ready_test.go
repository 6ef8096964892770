package daemon

import (
	"testing"
	"time"

	"github.com/robfig/cron/v3"
)

// TestStaleAt: a scan is stale once three scheduled cycles have come due
// after it, counted on the schedule itself.
func TestStaleAt(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	parse := func(spec string) cron.Schedule {
		s, err := cron.ParseStandard(spec)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := []struct {
		name  string
		sched cron.Schedule
		ok    string // the last successful scan
		want  string
	}{
		// Even gaps: three of them.
		{"every minute", parse("@every 1m"), "2026-12-01T12:00:05Z", "2026-12-01T12:03:05Z"},
		{"hourly", parse("0 * * * *"), "2026-12-01T12:00:03Z", "2026-12-01T15:00:00Z"},
		// Business hours: the last scan of the day stays fresh overnight,
		// until the third cycle of the morning (a Tuesday, then Monday
		// after a weekend).
		{"business hours, overnight", parse("*/5 9-17 * * 1-5"), "2026-12-01T17:55:02Z", "2026-12-02T09:10:00Z"},
		{"business hours, weekend", parse("*/5 9-17 * * 1-5"), "2026-12-04T17:55:02Z", "2026-12-07T09:10:00Z"},
		// A zone in the spec: its ticks are local times.
		{"zoned", parse("CRON_TZ=Europe/Berlin 0 9 * * *"), "2026-12-01T08:00:01Z", "2026-12-04T08:00:00Z"},
		// No schedule yet: the default @every 1m.
		{"none", nil, "2026-12-01T12:00:05Z", "2026-12-01T12:03:05Z"},
	}
	for _, c := range cases {
		if got := staleAt(c.sched, at(c.ok)); !got.Equal(at(c.want)) {
			t.Errorf("%s: staleAt = %s, want %s", c.name, got.UTC().Format(time.RFC3339), c.want)
		}
	}
}

// TestFailingWords: a run of failed cycles in the words the page, the API
// and /readyz use; none after a cycle that succeeded.
func TestFailingWords(t *testing.T) {
	since := time.Date(2026, 12, 1, 5, 20, 0, 7e8, time.UTC)
	cases := []struct {
		f    failing
		want string
	}{
		{failing{}, ""},
		// kandev unread: the scan fails.
		{failing{since: since, n: 1, scan: true, err: "kandev database x: gone"}, "scan failing since 2026-12-01 05:20:00 UTC (1 cycle): kandev database x: gone"},
		// The scan works, the ledger does not.
		{failing{since: since, n: 3, err: "ledger: locked"}, "cycle failing since 2026-12-01 05:20:00 UTC (3 cycles in a row): ledger: locked"},
	}
	for _, c := range cases {
		if got := c.f.words(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.f, got, c.want)
		}
	}
}
