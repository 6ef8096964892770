package pgtest

import (
	"errors"
	"syscall"
	"time"
)

// sleep waits d with the kernel's high-resolution timer. Go's own timers
// round a wait under a millisecond up to one on Linux (the poller waits in
// whole milliseconds), which would turn a link's 0.5 ms each way into more
// than 1 ms; nanosleep overshoots by about 0.1 ms instead.
func sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var left syscall.Timespec
		if err := syscall.Nanosleep(&ts, &left); !errors.Is(err, syscall.EINTR) {
			return
		}
		ts = left
	}
}
