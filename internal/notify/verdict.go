package notify

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"
)

// Verdict is what a delivery error means for the action: retry or give up,
// how long to wait, and whether the attempt may have landed anyway. Each
// outlet gives its own errors their verdict (its service's codes) and
// leaves the rest to Transport.
type Verdict struct {
	Retry bool
	// After is a server-imposed wait (Retry-After), zero when none.
	After time.Duration
	// Uncertain: the request may have been processed (a timeout, a 5xx, a
	// dropped connection). The next attempt looks for evidence first.
	Uncertain bool
	// RateLimited: the service said 429; a paced outlet's channel closes
	// for After.
	RateLimited bool
	// NotSent: the error came before any request left (ErrNotSent).
	NotSent bool
	// Gone: the destination says it is gone for good (a webhook's 410):
	// an outlet whose entry names destinations holds it.
	Gone bool
	// Unreachable: no answer came from the destination (a timeout, a
	// connection refused or never made): its lane's breaker counts it.
	// An answer of any status says the destination is there.
	Unreachable bool
	// Code is the service's error code or the HTTP status, for logs.
	Code string
}

// ErrNotSent marks an error raised before any request left (a paced
// client's wait for its next slot ran into the cycle's end): the action
// goes back untried, due next cycle.
var ErrNotSent = errors.New("not sent")

// Transport is the verdict on an error no service answered with: one
// raised before any request left, a deadline, or a connection that broke,
// whose request's fate is unknown.
func Transport(err error) Verdict {
	var ne net.Error
	switch {
	case err == nil:
		return Verdict{}
	case errors.Is(err, ErrNotSent):
		return Verdict{Retry: true, NotSent: true, Code: "not_sent"}
	case errors.Is(err, syscall.ECONNREFUSED):
		// No connection, so no request: nothing can have landed (retried
		// after a backoff, with no earlier attempt to look for).
		return Verdict{Retry: true, Unreachable: true, Code: "refused"}
	case errors.Is(err, context.DeadlineExceeded):
		return Verdict{Retry: true, Uncertain: true, Unreachable: true, Code: "timeout"}
	case errors.As(err, &ne):
		// A read that timed out, or a dial that failed (no such host, no
		// route), heard nothing from the destination; a connection that
		// broke after it was made did.
		var op *net.OpError
		unreachable := ne.Timeout() || errors.As(err, &op) && op.Op == "dial"
		return Verdict{Retry: true, Uncertain: true, Unreachable: unreachable, Code: "timeout"}
	}
	// Connection resets, truncated bodies: the request's fate is unknown.
	return Verdict{Retry: true, Uncertain: true, Code: "transport"}
}

// Backoff is the wait before retry number attempt (1-based): exponential
// from 5s, capped at 5 minutes.
func Backoff(attempt int) time.Duration {
	d := 5 * time.Second
	for i := 1; i < attempt && d < 5*time.Minute; i++ {
		d *= 2
	}
	if d > 5*time.Minute {
		d = 5 * time.Minute
	}
	return d
}
