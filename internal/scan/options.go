package scan

import "time"

// Thresholds say how old a condition must be before it is a finding.
type Thresholds struct {
	StallAfter         time.Duration
	NeverStartedAfter  time.Duration
	ClarificationAfter time.Duration
	PermissionAfter    time.Duration
	// InterruptedAfter defaults to 10m: kandev's in-process notice fires at
	// 5m, and watchdogd is the outside-in escalation, not a second copy.
	InterruptedAfter time.Duration
}

// DefaultThresholds are the finding thresholds' defaults.
func DefaultThresholds() Thresholds {
	return Thresholds{
		StallAfter:         15 * time.Minute,
		NeverStartedAfter:  10 * time.Minute,
		ClarificationAfter: 15 * time.Minute,
		PermissionAfter:    15 * time.Minute,
		InterruptedAfter:   10 * time.Minute,
	}
}

// Kandev rules: how the running kandev resolves its current turn.
const (
	// RulePreSpec is released kandev: no open-first key, no lifecycle
	// exclusion. Questions on watchdogd's current turn that kandev's rule
	// misses are shadowed.
	RulePreSpec = "pre_spec"
	// RuleSpec is kandev with the rule fixed: the same rule as watchdogd's.
	RuleSpec = "spec"
)

// Options are the inputs of Findings besides the snapshot and the clock.
type Options struct {
	Thresholds Thresholds
	// KandevRule is RulePreSpec (default) or RuleSpec.
	KandevRule string
	// BaseURL is kandev's base URL, for task links.
	BaseURL string
}
