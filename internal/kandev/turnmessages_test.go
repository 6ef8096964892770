package kandev_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
)

// TestFutureUpdatesLeftOut: with a limit (the scan's instant and a
// tolerance), an agent update after it is left out of the turn's newest and
// named, on both dialects, so that the agent's real last output stays
// known; every other timestamp after it is read as missing and named; a
// turn whose only updates are after it still shows output, at no known time.
func TestFutureUpdatesLeftOut(t *testing.T) {
	ahead := 5*time.Hour + 30*time.Minute
	for _, dc := range dialects {
		t.Run(dc.name, func(t *testing.T) {
			b := kandevdb.NewBuilder(now)
			s := b.Session("busy", "task", "ws", "RUNNING", time.Hour, "")
			s.Turn("busy-turn", 40*time.Minute, -1, "").Agent("tool_call", 30*time.Minute).Agent("message", 2*time.Minute)
			b.DS.Messages[0].UpdatedAt = b.Ago(-ahead)
			s = b.Session("only", "task", "ws", "RUNNING", time.Hour, "")
			s.Turn("only-turn", 40*time.Minute, -1, "").Agent("tool_call", 30*time.Minute).
				Message("agent", "status", "Session resumed", 20*time.Minute, "")
			b.DS.Messages[2].UpdatedAt = b.Ago(-ahead)
			b.DS.Messages[3].CreatedAt = b.Ago(-ahead)
			db := load(t, dc, b.DS, kandevdb.Options{})
			snap := snapshot(t, db.URL(), kandev.Options{NotAfter: func() time.Time { return now.Add(2 * time.Minute) }})
			busy, only := snap.Sessions[0], snap.Sessions[1]
			var newest *model.Message
			for i, m := range busy.Messages {
				if m.Aggregate() {
					newest = &busy.Messages[i]
				}
			}
			if newest == nil || !newest.UpdatedAt.Equal(now.Add(-2*time.Minute)) || newest.Type != "message" {
				t.Fatalf("busy turn's newest update %+v, want the message 2 min ago", newest)
			}
			var unknown, status bool
			for _, m := range only.Messages {
				unknown = unknown || m.Aggregate() && m.UpdatedAt.IsZero()
				status = status || m.Type == "status" && m.CreatedAt.IsZero() && !m.UpdatedAt.IsZero()
			}
			if !unknown || !status {
				t.Fatalf("only turn's messages %+v: want output at no known time and the status row's creation missing", only.Messages)
			}
			want := []model.RowRef{
				{Table: "task_session_messages", Of: "an update after the scan, turn busy-turn"},
				{Table: "task_session_messages", Of: "an update after the scan, turn only-turn"},
				{Table: "task_session_messages", ID: b.DS.Messages[3].ID},
			}
			got := slices.Clone(snap.Future)
			slices.SortFunc(got, func(a, b model.RowRef) int { return strings.Compare(a.String(), b.String()) })
			slices.SortFunc(want, func(a, b model.RowRef) int { return strings.Compare(a.String(), b.String()) })
			if !slices.Equal(got, want) {
				t.Fatalf("future rows %v, want %v", got, want)
			}
		})
	}
}

// TestTraces: the rows of turns that are not current are read as a
// current turn's are, with their own row (its close and updated_at), on
// both dialects; a turn with no message reads as none, and one not asked
// for is not read. Sessions that left the active ones say whether they
// ended, their task was archived, or they are gone.
func TestTraces(t *testing.T) {
	for _, dc := range dialects {
		t.Run(dc.name, func(t *testing.T) {
			b := kandevdb.NewBuilder(now)
			s := b.Session("s", "task", "ws", "RUNNING", time.Hour, "")
			s.Turn("old", 50*time.Minute, 40*time.Minute, "").Clarification("p", "q", "T", "P", nil, "answered", 45*time.Minute, nil)
			s.Turn("empty", 39*time.Minute, 39*time.Minute, "")
			b.DS.Turns[len(b.DS.Turns)-1].UpdatedAt = kandevdb.P(b.Ago(5 * time.Minute))
			s.Turn("cur", 30*time.Minute, -1, "").Agent("tool_call", 10*time.Minute)
			b.Session("ended", "task", "ws", "COMPLETED", time.Hour, "")
			b.Session("archived", "task", "ws", "WAITING_FOR_INPUT", time.Hour, "")
			b.DS.Tasks[len(b.DS.Tasks)-1].ArchivedAt = kandevdb.P(b.Ago(time.Minute))
			db := load(t, dc, b.DS, kandevdb.Options{})
			ctx := context.Background()
			r, err := kandev.Open(ctx, db.URL(), kandev.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = r.Close() }()
			got, err := r.Traces(ctx, []string{"ended", "archived", "deleted"}, []string{"old", "empty", "nowhere"})
			if err != nil {
				t.Fatal(err)
			}
			var question *model.Message
			old := got.Turns["old"]
			for i, m := range old.Messages {
				if !m.Aggregate() && m.Type == "clarification_request" {
					question = &old.Messages[i]
				}
			}
			if question == nil {
				t.Fatalf("old turn's messages %+v, want its question", old.Messages)
			}
			if st, _ := question.Meta.String("status"); st != "answered" {
				t.Fatalf("status %q", st)
			}
			if o := old.Turn; o.Open || !o.CompletedAt.Equal(now.Add(-40*time.Minute)) || !o.UpdatedAt.Equal(o.CompletedAt) || o.MessageCount != 1 {
				t.Fatalf("old turn's row %+v", o)
			}
			empty, ok := got.Turns["empty"]
			if !ok || len(empty.Messages) != 0 || !empty.Turn.UpdatedAt.Equal(now.Add(-5*time.Minute)) || empty.Turn.MessageCount != 0 {
				t.Fatalf("empty turn %+v %v", empty, ok)
			}
			if _, ok := got.Turns["cur"]; ok || len(got.Turns) != 2 {
				t.Fatalf("read %d turns", len(got.Turns))
			}
			want := map[string]model.SessionTrace{"ended": {Found: true, State: "COMPLETED"},
				"archived": {Found: true, State: "WAITING_FOR_INPUT", TaskArchived: true}, "deleted": {}}
			if !reflect.DeepEqual(got.Sessions, want) {
				t.Fatalf("sessions %+v, want %+v", got.Sessions, want)
			}
		})
	}
}
