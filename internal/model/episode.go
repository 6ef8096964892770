package model

import "time"

// Episode is one finding's life: it opens when first seen, stays open while
// scans report it, and resolves when they stop.
type Episode struct {
	ID          string
	Identity    string
	Kind        Kind
	SessionID   string
	TaskID      string
	WorkspaceID string
	TurnID      string
	PendingID   string
	TaskTitle   string
	Since       time.Time
	OpenedAt    time.Time
	LastSeen    time.Time
	// MissingSince is when scans stopped reporting it (resolve_hold).
	MissingSince time.Time
	ResolvedAt   time.Time
	// Resolution is why it resolved in words, as they were said then;
	// Cleared is that reason's code.
	Resolution string
	Cleared    Cleared
	// KindChanges counts unanswered↔shadowed flips.
	KindChanges int
	// Finding is the latest finding as JSON (a scan.Finding).
	Finding string
	// Actions are the episode's actions, oldest first.
	Actions []Action
}

// Open reports whether the episode has not resolved.
func (e Episode) Open() bool { return e.ResolvedAt.IsZero() }

// Action is one side effect, saved before delivery.
type Action struct {
	Key       string
	EpisodeID string
	// Seq names the decision within the episode: "step/1/0", "kind/1",
	// "resolve".
	Seq       string
	Step      int
	Repeat    int
	Kind      ActionKind
	Channel   string
	Mention   string
	ParentKey string
	Digest    string
	// Body is the frozen rendering (JSON).
	Body        string
	State       State
	CreatedAt   time.Time
	UpdatedAt   time.Time
	NextAttempt time.Time
	Attempts    int
	// Uncertain is set when an earlier attempt may have landed (a timeout,
	// a 5xx, a crashed holder): the next attempt looks for evidence first.
	Uncertain     bool
	ClaimToken    string
	ClaimedBy     string
	ClaimedAt     time.Time
	ResultChannel string
	ResultTS      string
	Error         string
	Conflicts     int
}

// Terminal reports whether the action is settled for good.
func (a Action) Terminal() bool {
	return a.State == StateDelivered || a.State == StateFailed || a.State == StateSuperseded
}

// Ledger is what a decision reads of the ledger: the open episodes with
// their actions.
type Ledger struct {
	// Open are the open episodes with the actions a decision reads, not
	// every action of their history, and an action's Body only for a Slack
	// post that went to the top of the channel: see openActionsSQL.
	Open []Episode
}

// Plan is what one cycle's decision changes, applied in one transaction.
type Plan struct {
	// Now is the decision's instant.
	Now       time.Time
	Open      []Episode
	Refresh   []Refresh
	Missing   []Missing
	Resolve   []Resolve
	Actions   []Action
	Supersede []string
	// Requeue puts failed actions (by key) back to pending, due at Now
	// (`watchdogd episodes retry`).
	Requeue []string
}

// Empty reports whether the plan changes nothing.
func (p Plan) Empty() bool {
	return len(p.Open)+len(p.Refresh)+len(p.Missing)+len(p.Resolve)+len(p.Actions)+len(p.Supersede)+len(p.Requeue) == 0
}

// Refresh updates an open episode still reported by the scan.
type Refresh struct {
	ID          string
	Kind        Kind
	KindChanges int
	TaskTitle   string
	LastSeen    time.Time
	Finding     string
}

// Missing marks when an open episode was first not reported.
type Missing struct {
	ID    string
	Since time.Time
}

// Resolve closes an episode.
type Resolve struct {
	ID     string
	At     time.Time
	Reason Reason
}

// Applied reports what applying a plan found.
type Applied struct {
	// Inserted counts new actions.
	Inserted int
	// Conflicts are decisions whose key exists with another digest; the
	// stored action stays authoritative.
	Conflicts []Conflict
}

// Conflict is one key decided twice differently.
type Conflict struct {
	Key          string
	Stored, Want string // digests
}

// Due is an action ready for delivery with what delivery needs to know of
// its episode. It carries neither the action's body nor the episode's
// finding (both empty): in a storm thousands of actions are due and only a
// cycle's budget of them is sent, so the frozen text is read with the
// claim (Claim), for the actions that go out.
type Due struct {
	Action
	Episode Episode
}

// Claim is a won compare-and-set on one action.
type Claim struct {
	Action
	// Takeover is true when the claim replaced a stale one: the crashed
	// holder's request may have landed, so delivery looks for evidence first.
	Takeover bool
}

// Outcome settles a claimed action.
type Outcome struct {
	// State is delivered, failed, superseded, or pending (retry later).
	State         State
	ResultChannel string
	ResultTS      string
	Error         string
	// NextAttempt is when a retry may run (pending only).
	NextAttempt time.Time
	// Uncertain records that the attempt may have landed.
	Uncertain bool
	// Refund gives the attempt back (released without trying).
	Refund bool
}
