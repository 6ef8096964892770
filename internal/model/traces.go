package model

// Traces is what kandev holds of sessions and turns a snapshot does not
// show: how an episode cleared is told from them (internal/scan.Cleared).
type Traces struct {
	// Sessions holds each session asked for, Found or not.
	Sessions map[string]SessionTrace
	// Turns holds each turn asked for that kandev still holds.
	Turns map[string]TurnTrace
}

// SessionTrace is a session that left the active ones: ended, or its task
// archived, or gone from kandev's tables.
type SessionTrace struct {
	Found        bool
	State        string
	TaskArchived bool
}

// TurnTrace is a turn's row and its messages, read as a current turn's are.
type TurnTrace struct {
	Turn     Turn
	Messages []Message
}
