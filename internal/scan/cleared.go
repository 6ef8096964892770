package scan

import "github.com/watchdogd/watchdogd/internal/model"

// Cleared says, from a fresh snapshot, why an episode that scans no longer
// report cleared: what kandev recorded, in the words the Slack edit, the
// ledger and `watchdogd episodes show` use. s is the episode's session in
// the snapshot, nil when it is no longer active; kind, turnID and
// pendingID are the episode's.
//
// A question or permission that cleared on its own turn says what kandev
// wrote on its rows (answered, rejected, cancelled, expired, approved), or
// that they are gone; kandev keeps a bundle's rows on the turn it was
// asked in, so only a turn still current can say.
func Cleared(s *model.Session, kind model.Kind, turnID, pendingID string) string {
	if s == nil {
		return "the session ended"
	}
	cur := s.Current
	moved := cur == nil || cur.ID != turnID
	switch kind {
	case model.KindUnansweredClarification, model.KindShadowedClarification, model.KindPendingPermission:
		if moved {
			return "the turn moved on"
		}
		return askCleared(s, kind, pendingID)
	case model.KindStalledTurn, model.KindNeverStarted:
		switch {
		case turnID == "" && cur != nil:
			return "a turn started"
		case moved || !cur.Open:
			return "the turn completed"
		}
		return "the agent produced output"
	case model.KindInterruptedSession:
		return "the session resumed"
	case model.KindMultipleOpenTurns:
		return "one turn is open again"
	}
	return "the condition cleared"
}

// askCleared reads what kandev recorded on a question's or permission's
// rows, on the turn still current.
func askCleared(s *model.Session, kind model.Kind, pendingID string) string {
	typ, what := "clarification_request", "question"
	if kind == model.KindPendingPermission {
		typ, what = "permission_request", "permission request"
	}
	var statuses []string
	for _, m := range s.Messages {
		if m.Type != typ || !hasPendingID(m, pendingID) {
			continue
		}
		st, _ := m.Meta.String("status")
		statuses = append(statuses, st)
	}
	if len(statuses) == 0 {
		return "the " + what + " is gone from kandev"
	}
	// A bundle's rows are settled together; the first settled word in
	// this order says it, should they differ.
	for _, st := range []string{"answered", "approved", "rejected", "cancelled", "expired"} {
		for _, got := range statuses {
			if got == st {
				return clearedWords[st]
			}
		}
	}
	if kind == model.KindPendingPermission && !s.Current.Open {
		return "the turn closed (a kandev restart?): the permission can no longer be granted"
	}
	return "no longer waiting for a person"
}

// clearedWords are kandev's statuses as the cleared line says them.
var clearedWords = map[string]string{
	"answered":  "answered",
	"approved":  "approved",
	"rejected":  "rejected in kandev",
	"cancelled": "cancelled in kandev",
	"expired":   "expired in kandev (the agent stopped waiting)",
}

// hasPendingID says whether row m belongs to the question or permission
// pendingID: its metadata pending_id, or for a permission without one its
// row id (as the finding names it).
func hasPendingID(m model.Message, pendingID string) bool {
	pid, ok := m.Meta.String("pending_id")
	if !ok || pid == "" {
		return m.Type == "permission_request" && m.ID == pendingID
	}
	return pid == pendingID
}
