package cycle

import (
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// ScanOptions are the rules' options a config gives.
func ScanOptions(cfg *config.Config) scan.Options {
	t := cfg.Thresholds
	return scan.Options{
		Thresholds: scan.Thresholds{StallAfter: t.StallAfter, NeverStartedAfter: t.NeverStartedAfter,
			ClarificationAfter: t.ClarificationAfter, PermissionAfter: t.PermissionAfter, InterruptedAfter: t.InterruptedAfter},
		KandevRule: cfg.Kandev.CurrentTurnRule,
		BaseURL:    cfg.Kandev.BaseURL,
	}
}

// Findings derives the report from a snapshot taken at instant now. Every
// reading of kandev goes through it — the cycle, the fence before a
// delivery, scan — so that they agree.
func Findings(snap *model.Snapshot, cfg *config.Config, now time.Time) scan.Report {
	return scan.Findings(snap, ScanOptions(cfg), now)
}

// ReaderOptions are how kandev's database is read for cfg, with now the
// scan's clock: a timestamp more than thresholds.future_tolerance after
// it is read as missing.
func ReaderOptions(cfg *config.Config, now func() time.Time) kandev.Options {
	tolerance := cfg.Thresholds.FutureTolerance
	return kandev.Options{BusyTimeout: cfg.Database.BusyTimeout, NotAfter: func() time.Time { return now().Add(tolerance) },
		StallAfter: cfg.Thresholds.StallAfter}
}
