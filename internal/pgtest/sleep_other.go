//go:build !linux

package pgtest

import "time"

// sleep waits d (Go's timers elsewhere; the tests run on Linux).
func sleep(d time.Duration) { time.Sleep(d) }
