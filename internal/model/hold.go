package model

import "time"

// Hold is a destination an outlet must not send to: a webhook whose
// receiver answered 410 Gone, closed until its URL changes or an operator
// reopens it. A destination is named by its outlet and a key the outlet
// makes (a webhook's: its name and a hash of its URL, never the URL, which
// may hold a token).
type Hold struct {
	Outlet      string
	Destination string
	Reason      string
	Since       time.Time
	// Until ends the hold; zero holds until it is released.
	Until time.Time
}

// Holds says whether h holds at now.
func (h Hold) Holds(now time.Time) bool { return h.Until.IsZero() || now.Before(h.Until) }
