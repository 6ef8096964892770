package slack

import (
	"errors"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/watchdogd/watchdogd/internal/notify"
)

// Verdict is what an error from Slack means: the protocol's verdict
// (Deliver), and for an edit whether the message is gone or frozen.
type Verdict struct {
	Retry       bool
	After       time.Duration
	Uncertain   bool
	RateLimited bool
	NotSent     bool
	Unreachable bool
	Code        string
	// Gone: the message an edit was for no longer exists (someone deleted
	// it in Slack). There is nothing left to act on, so it is neither
	// retried nor a failure anyone should be paged for.
	Gone bool
	// Frozen: the message an edit was for exists but this token may not
	// edit it: the workspace's edit window closed (edit_window_closed), or
	// another app or bot posted it (cant_update_message). What the edit
	// had to say goes in the thread instead.
	Frozen bool
}

// Deliver is the verdict as the protocol takes it.
func (v Verdict) Deliver() notify.Verdict {
	return notify.Verdict{Retry: v.Retry, After: v.After, Uncertain: v.Uncertain, RateLimited: v.RateLimited, NotSent: v.NotSent, Unreachable: v.Unreachable, Code: v.Code}
}

// retryableCode reports Slack's ok:false codes that mean "try again";
// every other ok:false code is a permanent failure.
func retryableCode(code string) bool {
	switch code {
	case "ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout":
		return true
	}
	return false
}

// Classify applies Slack's status-code rules, written once, to an error
// from its Web API; anything else is the transport's (notify.Transport).
func Classify(err error) Verdict {
	var rl *slackapi.RateLimitedError
	var sc slackapi.StatusCodeError
	var se slackapi.SlackErrorResponse
	switch {
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
		retry := retryableCode(se.Err)
		return Verdict{Retry: retry, Uncertain: retry, Gone: se.Err == "message_not_found",
			Frozen: se.Err == "edit_window_closed" || se.Err == "cant_update_message", Code: se.Err}
	}
	t := notify.Transport(err)
	return Verdict{Retry: t.Retry, Uncertain: t.Uncertain, NotSent: t.NotSent, Unreachable: t.Unreachable, Code: t.Code}
}
