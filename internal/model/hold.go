package model

import "time"

// Hold is a destination an outlet must not send to, by outlet and a key
// the outlet makes (a webhook's: its name and a hash of its URL, never the
// URL, which may hold a token). Two kinds share it:
//   - a lane's breaker (Until set): the destination timed out or could not
//     be reached; its actions wait until Until, then one probe is sent;
//   - a destination gone for good (Until zero: a webhook whose receiver
//     answered 410 Gone), closed until its URL changes or an operator
//     reopens it.
type Hold struct {
	Outlet      string
	Destination string
	Reason      string
	Since       time.Time
	// Until ends the hold; zero holds until it is released.
	Until time.Time
	// Failures counts the attempts in a row that found the destination
	// unreachable (a breaker's backoff grows with it).
	Failures int
}

// Holds says whether h holds at now.
func (h Hold) Holds(now time.Time) bool { return h.Until.IsZero() || now.Before(h.Until) }

// Gone says whether h is a destination gone for good rather than a
// breaker that opens again by itself.
func (h Hold) Gone() bool { return h.Until.IsZero() }
