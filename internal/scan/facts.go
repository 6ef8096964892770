package scan

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// facts are what the rules read of one session's current turn.
type facts struct {
	// lastAgent is the newest agent activity whose time is known; zero when
	// none.
	lastAgent     time.Time
	lastAgentType string
	// agentAtUnknown is true when an activity row's time is missing: a
	// value in no shape kandev writes, or too far in the future to be
	// true. It still shows the agent did something.
	agentAtUnknown bool
	// lastUser is the newest user message's creation; zero when none.
	lastUser time.Time
	// cancelled is true when the user cancelled the turn in kandev (its
	// "Turn cancelled by user" status row).
	cancelled bool
	// anyPending is true when any clarification row (human or not) or,
	// while the turn is open, the newest permission request is pending:
	// "nothing pending" is its negation.
	anyPending bool
	bundles    []bundle
	permission *permission
	// lostPermission is a permission still marked pending on a closed
	// turn: kandev shows it, but a restart closed the turn and the agent
	// that asked is gone, so it can no longer be granted.
	lostPermission *permission
}

// someAgent says whether the turn holds agent activity at all.
func (f facts) someAgent() bool { return !f.lastAgent.IsZero() || f.agentAtUnknown }

// unanswered says whether the turn's last user message got no reply: a
// user message and no agent activity after it. Activity at an unknown time
// counts as a reply: the agent did something, and a page must not rest on
// a guess.
func (f facts) unanswered() bool {
	return !f.lastUser.IsZero() && !f.lastAgent.After(f.lastUser) && !f.agentAtUnknown
}

type bundle struct {
	pendingID string
	askedAt   time.Time
	questions []Question
	detached  bool
}

type permission struct {
	pendingID   string
	requestedAt time.Time
	toolCallID  *string
	text        string
	requestID   string
	options     []PermissionOption
}

// IsActivity says whether a current-turn row is agent activity: agent
// authored, and neither a status row nor a launch boot script. kandev
// writes every status row itself under the agent's name — "New session
// started" at a launch, "Session resumed" at a resume, "Agent connection
// lost — retrying…", its stall notice — so none of them shows the agent
// doing anything, and a launch whose agent never spoke is never started.
// User-authored rows — watchdogd's own nudges among them — never are: a
// nudge must not resolve its own alert.
func IsActivity(m model.Message) bool {
	if m.Author != "agent" {
		return false
	}
	switch m.Type {
	case "status":
		return false
	case "script_execution":
		v, _ := m.Meta.String("script_type")
		return v != "agent_boot"
	}
	return true
}

// pendingStatus: absent, NULL, non-string, ” and "pending" are pending.
func pendingStatus(m model.Message) bool {
	s, ok := m.Meta.String("status")
	return !ok || s == "" || s == "pending"
}

func readFacts(s model.Session) facts {
	var f facts
	var newestPerm *model.Message
	groups := map[string][]model.Message{}
	var order []string
	for i := range s.Messages {
		m := s.Messages[i]
		f.observe(m)
		if m.Aggregate() {
			// It stands for the newest plain agent update, whose type may
			// be a question's or a permission's; those rows are read whole.
			continue
		}
		switch m.Type {
		case "clarification_request":
			if pendingStatus(m) {
				f.anyPending = true
			}
			pid, _ := m.Meta.String("pending_id")
			if _, seen := groups[pid]; !seen {
				order = append(order, pid)
			}
			groups[pid] = append(groups[pid], m)
		case "permission_request":
			if newestPerm == nil || newer(m, *newestPerm) {
				newestPerm = &s.Messages[i]
			}
		}
	}
	for _, pid := range order {
		if b, ok := humanBundle(pid, groups[pid]); ok {
			f.bundles = append(f.bundles, b)
		}
	}
	if newestPerm != nil && pendingStatus(*newestPerm) {
		p := permissionOf(*newestPerm)
		if s.Current != nil && !s.Current.Open {
			f.lostPermission = p // not pending: nobody can grant it
		} else {
			f.anyPending, f.permission = true, p
		}
	}
	return f
}

// observe notes what one row shows of the turn's progress: agent activity,
// a user message, a user's cancel.
func (f *facts) observe(m model.Message) {
	switch {
	case IsActivity(m):
		f.agentAtUnknown = f.agentAtUnknown || m.UpdatedAt.IsZero()
		if m.UpdatedAt.After(f.lastAgent) {
			f.lastAgent, f.lastAgentType = m.UpdatedAt, m.Type
		}
	case m.Author == "user":
		if m.CreatedAt.After(f.lastUser) {
			f.lastUser = m.CreatedAt
		}
	case m.Author == "agent" && m.Type == "status" && (m.Meta.Flag("cancelled") || m.Content == userCancelled):
		f.cancelled = true
	}
}

// userCancelled is the text of the status row kandev writes into a turn the
// user cancelled; its metadata carries "cancelled": true.
const userCancelled = "Turn cancelled by user"

// permissionOf reads a permission request row.
func permissionOf(m model.Message) *permission {
	pid, ok := m.Meta.String("pending_id")
	if !ok || pid == "" {
		pid = m.ID // still pending; the row id keeps it identifiable
	}
	p := &permission{pendingID: pid, requestedAt: m.CreatedAt, text: m.Content}
	if tc, ok := m.Meta.String("tool_call_id"); ok {
		p.toolCallID = &tc
	}
	p.requestID, _ = m.Meta.String("request_id")
	if raw, ok := m.Meta.Raw("options"); ok {
		var opts []PermissionOption
		if json.Unmarshal([]byte(raw), &opts) == nil {
			for _, o := range model.CutOptions(opts, model.MaxOptions, PermissionOption{Name: model.CutMark}) {
				if o.ID != "" {
					p.options = append(p.options, PermissionOption{ID: o.ID, Name: model.Cut(o.Name, model.MaxOptionText), Kind: model.Cut(o.Kind, model.MaxOptionText)})
				}
			}
		}
	}
	return p
}

// newer orders messages by creation instant, then id.
func newer(a, b model.Message) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.ID > b.ID
}

// humanBundle applies the bundle rule: pending when one row is
// pending; not for humans when a row carries parent_question (an autopilot
// child asking its parent agent) or names no question id, or the bundle has
// no pending_id (nothing could answer it).
func humanBundle(pendingID string, rows []model.Message) (bundle, bool) {
	b := bundle{pendingID: pendingID}
	pending := false
	seen := map[string]bool{}
	for _, m := range rows {
		if pendingStatus(m) {
			pending = true
		}
		if m.Meta.Flag("parent_question") {
			return bundle{}, false
		}
		q := question(m)
		if q.ID == "" {
			return bundle{}, false
		}
		if !seen[q.ID] {
			seen[q.ID] = true
			b.questions = append(b.questions, q)
		}
		if m.Meta.Flag("agent_disconnected") {
			b.detached = true
		}
		if !m.CreatedAt.IsZero() && (b.askedAt.IsZero() || m.CreatedAt.Before(b.askedAt)) {
			b.askedAt = m.CreatedAt
		}
	}
	if !pending || pendingID == "" {
		return bundle{}, false
	}
	sort.SliceStable(b.questions, func(i, j int) bool { return b.questions[i].index < b.questions[j].index })
	return b, true
}

type questionMeta struct {
	ID      string       `json:"id"`
	Title   string       `json:"title"`
	Prompt  string       `json:"prompt"`
	Options []optionMeta `json:"options"`
}

type optionMeta struct {
	ID          string `json:"option_id"`
	Label       string `json:"label"`
	Description string `json:"description"`
}

// question reads a clarification row's question: question_id, else
// question.id; title, prompt and options from question, else the content.
// The agent's text is cut as it is decoded (model.MaxText, MaxOptionText,
// MaxOptions).
func question(m model.Message) Question {
	var q Question
	if raw, ok := m.Meta.Raw("question"); ok {
		var qm questionMeta
		if json.Unmarshal([]byte(raw), &qm) == nil {
			q.ID, q.Title, q.Prompt = qm.ID, model.Cut(qm.Title, model.MaxText), model.Cut(qm.Prompt, model.MaxText)
			for _, o := range model.CutOptions(qm.Options, model.MaxOptions, optionMeta{Label: model.CutMark}) {
				q.Options = append(q.Options, Option{ID: o.ID, Label: model.Cut(o.Label, model.MaxOptionText),
					Description: model.Cut(o.Description, model.MaxOptionText)})
			}
		}
	}
	if id, ok := m.Meta.String("question_id"); ok && id != "" {
		q.ID = id
	}
	if q.Prompt == "" && q.Title == "" {
		q.Prompt = m.Content
	}
	if idx, ok := m.Meta.Raw("question_index"); ok {
		_ = json.Unmarshal([]byte(idx), &q.index)
	}
	return q
}
