package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/robfig/cron/v3"
)

// ParseSchedule reads a cron schedule (five fields, or a descriptor like
// "@every 1m", optionally after CRON_TZ=Zone) as the daemon runs it.
// robfig/cron v3.0.1 panics on a time zone with nothing after it
// ("TZ=UTC": it slices up to a space that is not there), so that case is an
// error here, and any other panic of the parser is one too: no schedule an
// operator writes may stop check-config or kill a running daemon on reload.
func ParseSchedule(spec string) (sched cron.Schedule, err error) {
	if (strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=")) && !strings.Contains(spec, " ") {
		return nil, errors.New(`a time zone needs the schedule after it, separated by a space (like "CRON_TZ=Europe/Berlin 0 9 * * 1-5")`)
	}
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("the cron parser cannot read it (%v)", r)
		}
	}()
	return cron.ParseStandard(spec)
}
