package notify

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/slack-go/slack"

	"github.com/watchdogd/watchdogd/internal/kandev"
)

// Verdict is what a delivery error means for the action: retry or give up,
// how long to wait, and whether the attempt may have landed anyway.
type Verdict struct {
	Retry bool
	// After is a server-imposed wait (Slack's Retry-After), zero when none.
	After time.Duration
	// Uncertain: the request may have been processed (a timeout, a 5xx, a
	// dropped connection). The next attempt looks for evidence first.
	Uncertain bool
	// RateLimited: Slack said 429; the channel closes for After.
	RateLimited bool
	// Gone: the message an edit was for no longer exists (someone deleted
	// it in Slack). There is nothing left to act on, so it is neither
	// retried nor a failure anyone should be paged for.
	Gone bool
	// Frozen: the message an edit was for exists but this token may not
	// edit it: the workspace's edit window closed (edit_window_closed), or
	// another app or bot posted it (cant_update_message). What the edit
	// had to say goes in the thread instead.
	Frozen bool
	// NotSent: the error came before any request left (ErrNotSent).
	NotSent bool
	// Code is Slack's error code or the HTTP status, for logs and metrics.
	Code string
}

// retryableSlackCode reports Slack's ok:false codes that mean "try again"
// (rate limits, server errors); any other ok:false code is a permanent failure.
func retryableSlackCode(code string) bool {
	switch code {
	case "ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout":
		return true
	}
	return false
}

// Classify applies the status-code rules, written once, to an error from
// Slack or kandev.
func Classify(err error) Verdict {
	var rl *slack.RateLimitedError
	var sc slack.StatusCodeError
	var se slack.SlackErrorResponse
	var ke *kandev.RequestError
	var kd *kandev.DialError
	var ne net.Error
	switch {
	case err == nil:
		return Verdict{}
	case errors.Is(err, ErrNotSent):
		return Verdict{Retry: true, NotSent: true, Code: "not_sent"}
	case errors.As(err, &rl):
		return Verdict{Retry: true, After: rl.RetryAfter, RateLimited: true, Code: "429"}
	case errors.As(err, &sc):
		if sc.Code == 429 {
			return Verdict{Retry: true, RateLimited: true, After: time.Second, Code: "429"}
		}
		if sc.Code >= 500 {
			return Verdict{Retry: true, Uncertain: true, Code: sc.Status}
		}
		return Verdict{Code: sc.Status}
	case errors.As(err, &se):
		if se.Err == "ratelimited" {
			return Verdict{Retry: true, RateLimited: true, After: time.Second, Code: se.Err}
		}
		// internal_error and friends may follow a partial success.
		retry := retryableSlackCode(se.Err)
		return Verdict{Retry: retry, Uncertain: retry, Gone: se.Err == "message_not_found",
			Frozen: se.Err == "edit_window_closed" || se.Err == "cant_update_message", Code: se.Err}
	case errors.As(err, &ke):
		// As with Slack's internal_error, kandev's may follow a partial
		// success: an agent.cancel whose agent did not acknowledge in time
		// is answered INTERNAL_ERROR after kandev has unblocked the turn
		// (lifecycle.ErrCancelEscalated).
		retry := ke.Retryable()
		return Verdict{Retry: retry, Uncertain: retry, Code: ke.Code}
	case errors.As(err, &kd): // before net.Error: no request left
		return Verdict{Retry: true, Code: "connect"}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne):
		return Verdict{Retry: true, Uncertain: true, Code: "timeout"}
	}
	// Connection resets, truncated bodies, refused connections: the
	// request's fate is unknown.
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
