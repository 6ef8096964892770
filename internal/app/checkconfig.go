package app

import (
	"errors"
	"fmt"

	"github.com/watchdogd/watchdogd/internal/config"
)

// silentFailure makes Run exit 1 without another line: the command already
// said what failed.
type silentFailure struct{}

func (silentFailure) Error() string { return "failed" }

// runCheckConfig checks each file: SUCCESS, or FAILED with every problem as
// file:line: field: problem. Secret sources must be configured; the files
// they name need not exist here (CI checks a chart's config).
func runCheckConfig(opts Options) error {
	if len(opts.Files) == 0 {
		return usageError("needs at least one file: watchdogd check-config FILE…")
	}
	failed := false
	for _, f := range opts.Files {
		_, err := config.Load(f, opts.Getenv)
		var p *config.Problems
		switch {
		case err == nil:
			fmt.Fprintf(opts.Stdout, "SUCCESS: %s\n", f)
		case errors.As(err, &p):
			failed = true
			for _, line := range p.Lines() {
				fmt.Fprintf(opts.Stdout, "FAILED: %s\n", line)
			}
		default:
			failed = true
			fmt.Fprintf(opts.Stdout, "FAILED: %s: %s\n", f, OneLine(err))
		}
	}
	if failed {
		return silentFailure{}
	}
	return nil
}
