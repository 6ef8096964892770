package model

// Cleared is why an episode cleared, as a code: the ledger's
// episodes.cleared, the cleared label of
// watchdogd_episode_duration_seconds, the key of `watchdogd report`'s
// counts. Its words (Words) are what people read: the Slack edit, the
// log, `watchdogd episodes show`, a webhook's resolution. Both come from
// the code, so that what is counted and what is said never drift apart.
type Cleared string

// The codes: every reason internal/scan finds and every way a person
// resolves an episode. A reason added to scan.Cleared is a code added here,
// to ClearedCodes and to ClearedBy (TestEveryReasonHasACode).
const (
	// The session left the snapshot.
	ClearedSessionEnded Cleared = "session_ended"
	ClearedTaskArchived Cleared = "task_archived"
	ClearedSessionGone  Cleared = "session_gone"
	// A turn's progress.
	ClearedTurnCompleted Cleared = "turn_completed"
	ClearedTurnAbandoned Cleared = "turn_abandoned"
	ClearedAgentOutput   Cleared = "agent_output"
	ClearedTurnStarted   Cleared = "turn_started"
	ClearedTurnMovedOn   Cleared = "turn_moved_on"
	ClearedOneOpenTurn   Cleared = "one_open_turn"
	// A session a restart left parked.
	ClearedNewTurn      Cleared = "new_turn"
	ClearedAgentReplied Cleared = "agent_replied"
	ClearedQueued       Cleared = "queued"
	ClearedUnparked     Cleared = "unparked"
	ClearedResumed      Cleared = "resumed"
	// What kandev wrote on a question's or a permission's rows.
	ClearedAnswered           Cleared = "answered"
	ClearedApproved           Cleared = "approved"
	ClearedRejected           Cleared = "rejected"
	ClearedCancelled          Cleared = "cancelled"
	ClearedExpired            Cleared = "expired"
	ClearedQuestionGone       Cleared = "question_gone"
	ClearedPermissionGone     Cleared = "permission_gone"
	ClearedNoLongerWaiting    Cleared = "no_longer_waiting"
	ClearedPermissionOrphaned Cleared = "permission_orphaned"
	// A person resolved it: a click in Slack, `watchdogd episodes resolve`.
	ClearedFromSlack Cleared = "resolved_from_slack"
	ClearedByHand    Cleared = "resolved_by_hand"
	// ClearedOther is any other reason: an episode resolved by a watchdogd
	// that stored its reason only in words, none of which it knew.
	ClearedOther Cleared = "other"
)

// clearedWords are the codes' words, as people have read them since
// before there were codes (the ledger's older rows are mapped back from
// them).
var clearedWords = map[Cleared]string{
	ClearedSessionEnded:       "the session ended",
	ClearedTaskArchived:       "the task was archived",
	ClearedSessionGone:        "the session is gone from kandev",
	ClearedTurnCompleted:      "the turn completed",
	ClearedTurnAbandoned:      "the turn was abandoned — a kandev restart?",
	ClearedAgentOutput:        "the agent produced output",
	ClearedTurnStarted:        "a turn started",
	ClearedTurnMovedOn:        "the turn moved on",
	ClearedOneOpenTurn:        "one turn is open again",
	ClearedNewTurn:            "a new turn started",
	ClearedAgentReplied:       "the agent replied",
	ClearedQueued:             "a message was queued for it",
	ClearedUnparked:           "kandev no longer marks it interrupted",
	ClearedResumed:            "the session resumed",
	ClearedAnswered:           "answered",
	ClearedApproved:           "approved",
	ClearedRejected:           "rejected in kandev",
	ClearedCancelled:          "cancelled in kandev",
	ClearedExpired:            "expired in kandev (the agent stopped waiting)",
	ClearedQuestionGone:       "the question is gone from kandev",
	ClearedPermissionGone:     "the permission request is gone from kandev",
	ClearedNoLongerWaiting:    "no longer waiting for a person",
	ClearedPermissionOrphaned: "the turn closed (a kandev restart?): the permission can no longer be granted",
	ClearedFromSlack:          "resolved from Slack",
	ClearedByHand:             "resolved by hand",
	ClearedOther:              "the condition cleared",
}

// ClearedCodes lists every code, in the order of the constants.
var ClearedCodes = []Cleared{
	ClearedSessionEnded, ClearedTaskArchived, ClearedSessionGone,
	ClearedTurnCompleted, ClearedTurnAbandoned, ClearedAgentOutput, ClearedTurnStarted, ClearedTurnMovedOn, ClearedOneOpenTurn,
	ClearedNewTurn, ClearedAgentReplied, ClearedQueued, ClearedUnparked, ClearedResumed,
	ClearedAnswered, ClearedApproved, ClearedRejected, ClearedCancelled, ClearedExpired,
	ClearedQuestionGone, ClearedPermissionGone, ClearedNoLongerWaiting, ClearedPermissionOrphaned,
	ClearedFromSlack, ClearedByHand, ClearedOther,
}

// Words is the code as people read it; an unknown code reads as
// ClearedOther's.
func (c Cleared) Words() string {
	if w, ok := clearedWords[c]; ok {
		return w
	}
	return clearedWords[ClearedOther]
}

// Known reports whether c is one of ClearedCodes.
func (c Cleared) Known() bool {
	_, ok := clearedWords[c]
	return ok
}

// ClearedBy lists the codes an episode of kind k can clear with, as
// internal/scan decides them for it, plus those every kind can: its
// session leaving, a person's resolve, other. The metric's label pairs are
// created from it, so that its series are those that can happen, not
// every kind with every code.
func ClearedBy(k Kind) []Cleared {
	every := []Cleared{ClearedSessionEnded, ClearedTaskArchived, ClearedSessionGone, ClearedFromSlack, ClearedByHand, ClearedOther}
	var own []Cleared
	switch k {
	case KindUnansweredClarification, KindShadowedClarification:
		own = []Cleared{ClearedAnswered, ClearedRejected, ClearedCancelled, ClearedExpired, ClearedApproved,
			ClearedQuestionGone, ClearedNoLongerWaiting, ClearedTurnMovedOn}
	case KindPendingPermission:
		own = []Cleared{ClearedApproved, ClearedRejected, ClearedCancelled, ClearedExpired, ClearedAnswered,
			ClearedPermissionGone, ClearedNoLongerWaiting, ClearedPermissionOrphaned, ClearedTurnMovedOn}
	case KindStalledTurn, KindNeverStarted:
		own = []Cleared{ClearedTurnCompleted, ClearedTurnAbandoned, ClearedAgentOutput, ClearedTurnStarted, ClearedTurnMovedOn, ClearedCancelled}
	case KindInterruptedSession:
		own = []Cleared{ClearedNewTurn, ClearedAgentReplied, ClearedQueued, ClearedUnparked, ClearedResumed}
	case KindMultipleOpenTurns:
		own = []Cleared{ClearedOneOpenTurn}
	}
	return append(own, every...)
}

// Reason is why one episode cleared: its code and, for a person's resolve
// from Slack, who (a Slack user id), which the words name.
type Reason struct {
	Code Cleared
	Who  string
}

// Because is the reason of code c.
func Because(c Cleared) Reason { return Reason{Code: c} }

// Words is the reason as people read it: its code's words, and who.
func (r Reason) Words() string {
	if r.Who == "" {
		return r.Code.Words()
	}
	return r.Code.Words() + " by " + r.Who
}
