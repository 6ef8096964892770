package kandevapi

import (
	"errors"
	"fmt"

	"github.com/watchdogd/watchdogd/internal/notify"
)

// Classify applies kandev's rules to an error from its API, WebSocket or
// HTTP; anything else is the transport's (notify.Transport).
func Classify(err error) notify.Verdict {
	var ke *RequestError
	var kd *DialError
	var re *RespondError
	switch {
	case errors.As(err, &ke):
		// As with Slack's internal_error, kandev's may follow a partial
		// success: an agent.cancel whose agent did not acknowledge in time
		// is answered INTERNAL_ERROR after kandev has unblocked the turn.
		retry := ke.Retryable()
		return notify.Verdict{Retry: retry, Uncertain: retry, Code: ke.Code}
	case errors.As(err, &kd): // no request left
		return notify.Verdict{Retry: true, Unreachable: true, Code: "connect"}
	case errors.As(err, &re):
		// A respond's refusals are decisions (a 4xx); its 5xx may have
		// followed an answer kandev took.
		if re.Status >= 500 {
			return notify.Verdict{Retry: true, Uncertain: true, Code: fmt.Sprint(re.Status)}
		}
		return notify.Verdict{Code: fmt.Sprint(re.Status)}
	}
	return notify.Transport(err)
}
