// Package model holds watchdogd's vocabulary and the plain data its parts
// pass to each other: kandev's snapshot, episodes and their actions, the
// decision a cycle applies, and the escalation ladders. It does no I/O and
// imports no driver, so that the rules (internal/scan) and the decisions
// (internal/policy) can be read, built and tested on their own. See
// docs/architecture.md.
package model

import "strings"

// Kind is a finding kind: what is wrong with a session.
type Kind string

// The finding kinds (docs/architecture.md, "Findings").
const (
	KindStalledTurn             Kind = "stalled_turn"
	KindNeverStarted            Kind = "never_started"
	KindUnansweredClarification Kind = "unanswered_clarification"
	KindShadowedClarification   Kind = "shadowed_clarification"
	KindPendingPermission       Kind = "pending_permission"
	KindInterruptedSession      Kind = "interrupted_session"
	KindMultipleOpenTurns       Kind = "multiple_open_turns"
)

// Kinds lists every finding kind: first those a person owes an answer
// to, then those of a turn's progress. Every list keyed by kind (config
// defaults, metrics' labels, wording, the runbook) is held to it by a test.
var Kinds = []Kind{
	KindUnansweredClarification, KindShadowedClarification, KindPendingPermission,
	KindNeverStarted, KindStalledTurn, KindInterruptedSession, KindMultipleOpenTurns,
}

// KindNames lists the kinds for a message: "stalled_turn, never_started, …".
func KindNames() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// Known reports whether k is one of Kinds.
func (k Kind) Known() bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// Question reports whether k is about a question: the two clarification
// kinds, one episode whichever kandev shows.
func (k Kind) Question() bool {
	return k == KindUnansweredClarification || k == KindShadowedClarification
}

// HumanOwesAnswer says whether a finding kind waits on a person's answer
// that kandev still takes: a question on kandev's current turn, or a
// permission request on an open turn. A nudge there destroys it: kandev
// stores it in the blocked turn, stops the agent and resumes it with the
// nudge as its prompt, and the question leaves kandev's UI and API while
// its row still says pending. So no config may nudge one and no decision
// does.
func HumanOwesAnswer(k Kind) bool {
	return k == KindUnansweredClarification || k == KindPendingPermission
}

// Cancellable says whether a turn of kind k is one to cancel and nudge:
// a turn that runs without progress, which kandev refuses a plain message
// while it runs. Its Slack messages offer "Cancel turn and nudge".
func Cancellable(k Kind) bool {
	return k == KindStalledTurn || k == KindNeverStarted
}

// KindWords names a finding kind for people.
func KindWords(kind Kind) string {
	switch kind {
	case KindStalledTurn:
		return "stalled turn"
	case KindNeverStarted:
		return "never started"
	case KindUnansweredClarification:
		return "unanswered question"
	case KindShadowedClarification:
		return "question hidden in kandev"
	case KindPendingPermission:
		return "pending permission"
	case KindInterruptedSession:
		return "interrupted session"
	case KindMultipleOpenTurns:
		return "several open turns"
	}
	return string(kind)
}

// ActionKind is what an action does: a step's configured action, or the
// edit a resolve makes.
type ActionKind string

// The action kinds. A step may take all but ActionSlackUpdate, which only a
// resolve decides, and the kinds a click in Slack decides (see
// ClickActions).
const (
	ActionSlack          ActionKind = "slack"
	ActionSlackUpdate    ActionKind = "slack_update"
	ActionNudge          ActionKind = "nudge"
	ActionCancelAndNudge ActionKind = "cancel_and_nudge"
	ActionLog            ActionKind = "log"
	ActionAlertmanager   ActionKind = "alertmanager"
	ActionWebhook        ActionKind = "webhook"
	// ActionAnswer answers a question bundle in kandev (its HTTP respond).
	ActionAnswer ActionKind = "answer"
	// ActionPermission grants or denies a permission in kandev
	// (permission.respond over its WebSocket).
	ActionPermission ActionKind = "permission"
	// ActionSendMessage sends the option a person chose as a user message
	// (message.add): the remedy for a question kandev hides and refuses.
	ActionSendMessage ActionKind = "send_message"
	// ActionSnooze silences the episode's session and kind for a while.
	ActionSnooze ActionKind = "snooze"
	// ActionResolve resolves the episode and silences its session and kind
	// until the finding clears.
	ActionResolve ActionKind = "resolve"
	// ActionSlackTell tells the story of a click in Slack once it settled:
	// the first message edited to say what was done, or an ephemeral reply
	// to the person who clicked saying why nothing was.
	ActionSlackTell ActionKind = "slack_tell"
)

// ActionKinds lists every action kind.
var ActionKinds = []ActionKind{ActionSlack, ActionSlackUpdate, ActionNudge, ActionCancelAndNudge, ActionLog, ActionAlertmanager, ActionWebhook,
	ActionAnswer, ActionPermission, ActionSendMessage, ActionSnooze, ActionResolve, ActionSlackTell}

// ClickActions are the actions a click in Slack may decide (with
// ActionCancelAndNudge, which a step may take too).
var ClickActions = []ActionKind{ActionAnswer, ActionPermission, ActionSendMessage, ActionCancelAndNudge, ActionSnooze, ActionResolve}

// StepActions are the actions a configured step may take: each has an
// outlet registered for it.
var StepActions = []ActionKind{ActionSlack, ActionNudge, ActionCancelAndNudge, ActionLog, ActionAlertmanager, ActionWebhook}

// StepActionNames lists StepActions in words: "slack, nudge, … or log".
func StepActionNames() string {
	names := make([]string, len(StepActions))
	for i, a := range StepActions {
		names[i] = string(a)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// State is where an action is in its life.
type State string

// The action states: saved pending, claimed by one process, then settled
// for good as delivered, failed or superseded (or pending again, to retry).
const (
	StatePending    State = "pending"
	StateClaimed    State = "claimed"
	StateDelivered  State = "delivered"
	StateFailed     State = "failed"
	StateSuperseded State = "superseded"
)

// Result is what became of an action in a cycle, as logs and
// watchdogd_actions_total count it.
type Result string

// The results.
const (
	ResultDelivered  Result = "delivered"
	ResultFailed     Result = "failed"
	ResultSuperseded Result = "superseded"
	// ResultConflict: decided again with another digest (the config
	// changed); the stored action stays authoritative.
	ResultConflict Result = "conflict"
	// ResultDeferred: held back this cycle (a silence, quiet hours, a
	// Retry-After, the per-cycle budget) or given back untried.
	ResultDeferred Result = "deferred"
	// ResultRetried: attempted and due again (with backoff).
	ResultRetried Result = "retried"
)

// Results lists every result.
var Results = []Result{ResultDelivered, ResultFailed, ResultSuperseded, ResultConflict, ResultDeferred, ResultRetried}
