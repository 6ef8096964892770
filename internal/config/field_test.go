package config

import (
	"errors"
	"strings"
	"testing"
)

// TestScheduleNeverPanics: robfig/cron v3.0.1 panics on a time zone with
// no schedule after it; each is a problem on the schedule's line instead.
// A time zone followed by a schedule still works.
func TestScheduleNeverPanics(t *testing.T) {
	for _, spec := range []string{"TZ=UTC", "TZ=0", "CRON_TZ=", "CRON_TZ=Europe/Berlin", "TZ=UTC\t0 9 * * *"} {
		text := "log:\n  level: info\nschedule: \"" + strings.ReplaceAll(spec, "\t", `\t`) + "\"\n"
		_, err := Parse("s.yaml", []byte(text), noEnv)
		var p *Problems
		if !errors.As(err, &p) || len(p.Items) != 1 || p.Items[0].Line != 3 || p.Items[0].Field != "schedule" {
			t.Errorf("schedule %q: %v, want one problem at s.yaml:3: schedule", spec, err)
		}
	}
	for _, spec := range []string{"CRON_TZ=Europe/Berlin 0 9 * * 1-5", "TZ=UTC @every 1m"} {
		if _, err := ParseSchedule(spec); err != nil {
			t.Errorf("ParseSchedule(%q): %v", spec, err)
		}
	}
}
