package scan

import "github.com/watchdogd/watchdogd/internal/model"

// Cleared says, from a fresh snapshot, why an episode that scans no longer
// report cleared: what kandev recorded, in the words the Slack edit, the
// ledger and `watchdogd episodes show` use. s is the episode's session in
// the snapshot, nil when it is no longer active; kind, turnID and
// pendingID are the episode's. turn holds the messages of the episode's
// turn when it is no longer current (nil when they were not read).
//
// A question or permission says what kandev wrote on its rows (answered,
// rejected, cancelled, expired, approved), or that they are gone: kandev
// keeps a bundle's rows on the turn it was asked in, which an answer given
// after a restart moves on from.
func Cleared(s *model.Session, turn []model.Message, kind model.Kind, turnID, pendingID string) string {
	if s == nil {
		return "the session ended"
	}
	cur := s.Current
	moved := cur == nil || cur.ID != turnID
	switch kind {
	case model.KindUnansweredClarification, model.KindShadowedClarification, model.KindPendingPermission:
		if !moved {
			return askCleared(s.Messages, kind, pendingID, cur.Open)
		}
		if turn == nil {
			return "the turn moved on"
		}
		if why := askCleared(turn, kind, pendingID, false); why != stillWaiting && why != closedUnder {
			return why
		}
		return "the turn moved on"
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

// What askCleared says of rows still pending.
const (
	stillWaiting = "no longer waiting for a person"
	closedUnder  = "the turn closed (a kandev restart?): the permission can no longer be granted"
)

// AskedOn says whether an episode of this kind is about a question or a
// permission asked on its turn, whose rows say how it cleared.
func AskedOn(kind model.Kind) bool {
	return kind == model.KindUnansweredClarification || kind == model.KindShadowedClarification || kind == model.KindPendingPermission
}

// askCleared reads what kandev recorded on a question's or permission's
// rows among a turn's messages; open says whether that turn is open.
func askCleared(msgs []model.Message, kind model.Kind, pendingID string, open bool) string {
	typ, what := "clarification_request", "question"
	if kind == model.KindPendingPermission {
		typ, what = "permission_request", "permission request"
	}
	var statuses []string
	for _, m := range msgs {
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
	if kind == model.KindPendingPermission && !open {
		return closedUnder
	}
	return stillWaiting
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
