package kandev_test

import (
	"slices"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/kandevtime"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// The differential's part for what a restart leaves: turns' updated_at in
// every case RestartAt weighs, boot turns (kandev's resume writes one,
// which the rule takes as current; the snapshot then reads the newest
// turn that is not one), one-message turns that only look like them, and
// the newest reply of a turn a restart may have abandoned.

// bootMeta is the metadata of kandev's resume script; notBootMeta the
// launch's, which is no resume.
var (
	bootMeta    = kandevdb.P(`{"script_type": "agent_boot", "is_resuming": true}`)
	notBootMeta = kandevdb.P(`{"script_type": "agent_boot", "is_resuming": false}`)
)

// restartShapes reshapes ds's turns from the choices left after the
// dataset was drawn (none for an input its draws used up, so that a
// chosen seed keeps its shape): per turn, its updated_at (after its close,
// before it, in another shape), or the turn made a boot turn (closed at its start, its
// one message the resume script), or one that looks like it.
func restartShapes(ds *kandevdb.Dataset, src *kandevdb.Choices, v diffValues) {
	for i := range ds.Turns {
		tu := &ds.Turns[i]
		switch src.Next(7) {
		case 1:
			tu.UpdatedAt = &v.turnStamps[3]
		case 2:
			tu.UpdatedAt = &v.turnStamps[4]
		case 3:
			tu.UpdatedAt = &v.turnStamps[0]
		case 4, 5:
			meta := bootMeta
			if src.Next(4) == 0 {
				meta = notBootMeta
			}
			tu.CompletedAt = kandevdb.P(tu.StartedAt)
			ds.Messages = slices.DeleteFunc(ds.Messages, func(m kandevdb.Message) bool { return m.TurnID == tu.ID })
			ds.Messages = append(ds.Messages, kandevdb.Message{ID: "boot-" + tu.ID, SessionID: tu.SessionID, TaskID: tu.TaskID, TurnID: tu.ID,
				Author: "agent", Type: "script_execution", Metadata: meta, CreatedAt: tu.StartedAt, UpdatedAt: tu.StartedAt})
		}
	}
}

// isBoot says from the rows whether a turn is a boot turn.
func isBoot(d authority.Dialect, ds kandevdb.Dataset, tu kandevdb.Turn) bool {
	var msgs []kandevdb.Message
	for _, m := range ds.Messages {
		if m.TurnID == tu.ID {
			msgs = append(msgs, m)
		}
	}
	if tu.CompletedAt == nil || len(msgs) != 1 || msgs[0].Author != "agent" || msgs[0].Type != "script_execution" {
		return false
	}
	meta := authority.ParseMetadata(d, msgs[0].Metadata)
	st, _ := meta.String("script_type")
	return st == "agent_boot" && meta.Flag("is_resuming")
}

// checkRestartReads holds what the snapshot read for restarts to the rows:
// the current turn's updated_at and message count, the newest turn that
// is not a boot turn when the current one is, and the newest reply of a
// turn that may have been abandoned.
// diffStallAfter is the readers' thresholds.stall_after: a turn closed
// that long after its agent's last activity may have been abandoned. One
// second, so that the datasets' stamps (a second or so apart) hold turns
// closed quiet as well as turns closed at once.
const diffStallAfter = time.Second

func checkRestartReads(t *testing.T, d authority.Dialect, ds kandevdb.Dataset, s model.Session) {
	t.Helper()
	byID := map[string]kandevdb.Turn{}
	var turns []authority.Turn
	hasMsg := turnsWithMessages(ds)
	for _, tu := range ds.Turns {
		if tu.SessionID != s.ID {
			continue
		}
		byID[tu.ID] = tu
		started := tu.StartedAt
		turns = append(turns, authority.Turn{ID: tu.ID, StartedAt: authority.StampOf(d, &started), CreatedAt: authority.StampOf(d, tu.CreatedAt),
			CompletedAt: authority.StampOf(d, tu.CompletedAt), Metadata: tu.Metadata, HasMessages: hasMsg[tu.ID]})
	}
	if s.Current == nil {
		return
	}
	cur := byID[s.Current.ID]
	if want := count(ds, cur.ID); s.Current.MessageCount != want {
		t.Errorf("%s session %s: current turn holds %d messages, read %d", d, s.ID, want, s.Current.MessageCount)
	}
	if !s.Current.Open {
		if want := updatedOf(cur); !s.Current.UpdatedAt.Equal(want) {
			t.Errorf("%s session %s: current turn's updated_at %v, want %v", d, s.ID, s.Current.UpdatedAt, want)
		}
	}
	want := ""
	if isBoot(d, ds, cur) {
		rest := slices.DeleteFunc(slices.Clone(turns), func(a authority.Turn) bool { return isBoot(d, ds, byID[a.ID]) })
		if res := authority.Resolve(d, rest); res.Current >= 0 {
			want = rest[res.Current].ID
		}
	}
	got := ""
	if s.BeforeBoot != nil {
		got = s.BeforeBoot.ID
	}
	if got != want {
		t.Errorf("%s session %s: the newest turn that is not a boot turn %q, want %q\nturns:%s", d, s.ID, got, want, describeTurns(ds, s.ID))
	}
	if s.BeforeBoot != nil {
		before := s
		before.Current, before.Messages = s.BeforeBoot, s.BeforeBootMessages
		checkMessages(t, d, ds, before)
		if n := count(ds, got); s.BeforeBoot.MessageCount != n {
			t.Errorf("%s session %s: turn %s holds %d messages, read %d", d, s.ID, got, n, s.BeforeBoot.MessageCount)
		}
	}
	judged, _ := scan.Judged(s)
	if judged == nil || !scan.MayBeAbandoned(s, diffStallAfter) {
		if judged != nil && !judged.RepliedAt.IsZero() {
			t.Errorf("%s session %s: a reply read for a turn no restart abandoned", d, s.ID)
		}
		return
	}
	if w := newestReply(ds, judged.ID); !judged.RepliedAt.Equal(w) {
		t.Errorf("%s session %s: newest reply on %s %v, want %v", d, s.ID, judged.ID, judged.RepliedAt, w)
	}
}

func count(ds kandevdb.Dataset, turn string) int {
	n := 0
	for _, m := range ds.Messages {
		if m.TurnID == turn {
			n++
		}
	}
	return n
}

// updatedOf is a closed turn's updated_at as kandevdb wrote it.
func updatedOf(tu kandevdb.Turn) time.Time {
	text := tu.UpdatedAt
	if text == nil {
		text = tu.CompletedAt
	}
	at, _ := kandevtime.Parse(*text)
	return at
}

// newestReply is the newest creation among the turn's plain agent rows
// that are no question or permission.
func newestReply(ds kandevdb.Dataset, turn string) time.Time {
	var newest time.Time
	for _, m := range ds.Messages {
		if m.TurnID != turn || m.Author != "agent" || slices.Contains([]string{"status", "script_execution", "clarification_request", "permission_request"}, m.Type) {
			continue
		}
		if at, _ := kandevtime.Parse(m.CreatedAt); at.After(newest) {
			newest = at
		}
	}
	return newest
}
