package kandevdb

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Spec sizes a generated kandev installation.
type Spec struct {
	Sessions        int
	ActiveFraction  float64 // share of sessions in a non-terminal state
	TurnsPerSession int
	MessagesPerTurn int
	Seed            uint64
	// IDOffset shifts every id, to add more history to an existing dataset.
	IDOffset int
	// TerminalOnly generates only terminal sessions (history growth).
	TerminalOnly bool
	Now          time.Time
}

// snapshotMeta is a realistic runtime_config_snapshot: most of a turn's
// metadata bytes, none of them flags.
const snapshotMeta = `"runtime_config_snapshot":{"agent":"claude-code","model":"claude-sonnet-4","executor":"worktree",` +
	`"profile":{"name":"default","mcp_servers":["kandev","github","filesystem"],"allowed_tools":["Read","Edit","Bash","Grep","Glob"],` +
	`"env":{"NODE_ENV":"development","CI":"false"},"max_turns":80,"permission_mode":"ask"},"workflow":{"step":"implement","auto_advance":true}},` +
	`"workflow_step_id_at_start":"9f1c2a7e-5b3d-4e8f-a1c6-2d7b9e0f4a35"`

// Generate streams a kandev-shaped dataset, chunk by chunk, so that five
// million messages never sit in memory at once. Active sessions look like
// live work (running turns, questions, permission requests, parked
// sessions); terminal ones are history.
func Generate(spec Spec, emit func(Dataset) error) error {
	rng := rand.New(rand.NewPCG(spec.Seed, uint64(spec.IDOffset)+7))
	base := spec.Now.Add(-24 * time.Hour * 30)
	const chunk = 500
	var ds Dataset
	for i := 0; i < spec.Sessions; i++ {
		n := spec.IDOffset + i
		active := !spec.TerminalOnly && rng.Float64() < spec.ActiveFraction
		genSession(&ds, rng, spec, n, active, base)
		if (i+1)%chunk == 0 {
			if err := emit(ds); err != nil {
				return err
			}
			ds = Dataset{}
		}
	}
	if ds.Len() > 0 {
		return emit(ds)
	}
	return nil
}

func id(kind string, n, j int) string { return fmt.Sprintf("%08x-%s-4000-8000-%012x", n, kind, j) }

var activeStates = []string{"RUNNING", "RUNNING", "WAITING_FOR_INPUT", "WAITING_FOR_INPUT", "WAITING_FOR_INPUT", "IDLE", "STARTING"}
var terminalStates = []string{"COMPLETED", "COMPLETED", "COMPLETED", "COMPLETED", "FAILED", "CANCELLED"}
var plainTypes = []string{"message", "tool_call", "tool_read", "tool_edit", "tool_execute", "thinking", "progress"}

func genSession(ds *Dataset, rng *rand.Rand, spec Spec, n int, active bool, base time.Time) {
	task, session := id("7a5c", n, 0), id("5e55", n, 0)
	start := base.Add(time.Duration(n%43200) * time.Minute)
	if active {
		start = spec.Now.Add(-time.Duration(30+rng.IntN(600)) * time.Minute)
	}
	state := terminalStates[rng.IntN(len(terminalStates))]
	if active {
		state = activeStates[rng.IntN(len(activeStates))]
	}
	var archived *string
	if !active && rng.IntN(20) == 0 {
		archived = P(TS(start.Add(48 * time.Hour)))
	}
	ds.Tasks = append(ds.Tasks, Task{ID: task, WorkspaceID: fmt.Sprintf("ws-%d", n%7), Title: fmt.Sprintf("Task %d: refactor module %d", n, n%97),
		Metadata: P(`{"source":"kanban"}`), ArchivedAt: archived, CreatedAt: TS(start)})
	ds.Sessions = append(ds.Sessions, Session{ID: session, TaskID: task, State: state, IsPrimary: true, StartedAt: P(TS(start)), UpdatedAt: TS(start)})
	step := 2 * time.Minute
	if active {
		step = time.Duration(25+rng.IntN(10)) * time.Second
	}
	for j := 0; j < spec.TurnsPerSession; j++ {
		tStart := start.Add(time.Duration(j) * step)
		last := j == spec.TurnsPerSession-1
		open := active && last && state != "WAITING_FOR_INPUT" && state != "IDLE"
		meta := "{" + snapshotMeta + "}"
		if j%5 == 2 { // a resume's boot turn, marked by kandev with the fix
			meta = `{"lifecycle_only":true,` + snapshotMeta + "}"
		}
		turn := Turn{ID: id("7e4a", n, j), SessionID: session, TaskID: task, StartedAt: TS(tStart), CreatedAt: P(TS(tStart)), Metadata: P(meta)}
		if !open {
			turn.CompletedAt = P(TS(tStart.Add(step - time.Second)))
		}
		ds.Turns = append(ds.Turns, turn)
		for k := 0; k < spec.MessagesPerTurn; k++ {
			m := Message{ID: fmt.Sprintf("%s-%04d", turn.ID, k), SessionID: session, TaskID: task, TurnID: turn.ID,
				Author: "agent", Type: plainTypes[(n+j+k)%len(plainTypes)], Content: "Reading the module and planning the change; " + turn.ID,
				Metadata: P(`{"tool_call_id":"tc-` + fmt.Sprint(k) + `"}`), CreatedAt: TS(tStart.Add(time.Duration(k) * time.Second))}
			if k == 0 {
				m.Author, m.Type, m.Content = "user", "message", "Please continue with the refactor."
			}
			if active && last && k == spec.MessagesPerTurn-1 {
				switch rng.IntN(6) {
				case 0:
					m.Type, m.Metadata = "clarification_request", P(fmt.Sprintf(`{"pending_id":"p-%d","question_id":"q1","question":{"id":"q1","title":"Which API?","prompt":"REST or gRPC?","options":[{"option_id":"a","label":"REST"},{"option_id":"b","label":"gRPC"}]},"status":"pending"}`, n))
				case 1:
					m.Type, m.Metadata = "permission_request", P(fmt.Sprintf(`{"pending_id":"perm-%d","tool_call_id":"tc","status":"pending"}`, n))
				}
			}
			m.UpdatedAt = m.CreatedAt
			ds.Messages = append(ds.Messages, m)
		}
	}
	if active && state == "WAITING_FOR_INPUT" && rng.IntN(4) == 0 {
		ds.Tasks[len(ds.Tasks)-1].Metadata = P(fmt.Sprintf(`{"source":"kanban","interrupted_at":%q}`, spec.Now.Add(-20*time.Minute).UTC().Format(time.RFC3339)))
	}
}
