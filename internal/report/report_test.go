package report

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// ep is an episode of kind on session s (of task and workspace), since,
// opened and resolved that long before t0 (resolved 0: still open).
func ep(kind model.Kind, s, task, ws string, since, opened, resolved time.Duration, why model.Cleared) Episode {
	e := Episode{Kind: kind, SessionID: s, TaskID: task, TaskTitle: "Task " + task, WorkspaceID: ws,
		Since: t0.Add(-since), Opened: t0.Add(-opened), Cleared: why}
	if resolved != 0 {
		e.Resolved = t0.Add(-resolved)
	}
	return e
}

const h, m = time.Hour, time.Minute

// day's episodes: a report over the 24 h before t0.
var dayEpisodes = []Episode{
	// s1 stalled an hour, then (overlapping) sat parked by a restart: one
	// and a half hours lost, not two.
	ep(model.KindStalledTurn, "s1", "t1", "ws-a", 5*h, 4*h+45*m, 4*h, model.ClearedAgentOutput),
	ep(model.KindInterruptedSession, "s1", "t1", "ws-a", 4*h+30*m, 4*h+20*m, 3*h+30*m, model.ClearedAgentReplied),
	// Several open turns on s1 count as neither lost nor owed time.
	ep(model.KindMultipleOpenTurns, "s1", "t1", "ws-a", 10*h, 10*h, 9*h, model.ClearedOneOpenTurn),
	// A question that turned shadowed before it was answered: it counts
	// as shadowed, the kind it resolved as. An hour owed.
	ep(model.KindShadowedClarification, "s2", "t2", "ws-a", 2*h, 1*h+45*m, 1*h, model.ClearedAnswered),
	// A permission still pending: owed from its since to the window's end.
	ep(model.KindPendingPermission, "s3", "t3", "ws-b", 30*m, 15*m, 0, ""),
	// Began and opened before the window, cleared in it: its time is cut
	// at the window's start, its time to clear is from its since.
	ep(model.KindNeverStarted, "s4", "t4", "ws-b", 30*h, 29*h+50*m, 23*h, model.ClearedTurnCompleted),
	// Over before the window: counts nowhere.
	ep(model.KindStalledTurn, "s5", "t5", "ws-d", 40*h, 39*h, 30*h, model.ClearedTurnCompleted),
	// Still stalled at the window's end.
	ep(model.KindStalledTurn, "s6", "t6", "ws-c", 2*h, 1*h+45*m, 0, ""),
}

// TestCompute: a day of episodes, counted per kind, in lost and owed
// time, by workspace and task, per day and per hour.
func TestCompute(t *testing.T) {
	r := Compute(Input{Episodes: dayEpisodes, From: t0.Add(-24 * h), Until: t0, Now: t0, Retention: 720 * h})
	if r.SchemaVersion != 1 || r.Window.Seconds != 86400 || !r.Covers.Complete || r.Covers.From != "2026-11-28T12:00:00Z" {
		t.Errorf("header: %+v %+v", r.Window, r.Covers)
	}
	kinds := map[model.Kind]Kind{}
	for _, k := range r.Kinds {
		kinds[k.Kind] = k
	}
	if len(r.Kinds) != len(model.Kinds) {
		t.Errorf("%d kinds, want every one", len(r.Kinds))
	}
	for _, c := range []struct {
		kind                       model.Kind
		opened, cleared, stillOpen int
		by                         map[model.Cleared]int
		ttc                        *Percentiles
	}{
		// Opened in the window: s1's and s6's; s4's and s5's opened before.
		{model.KindStalledTurn, 2, 1, 1, map[model.Cleared]int{model.ClearedAgentOutput: 1}, &Percentiles{3600, 3600}},
		{model.KindInterruptedSession, 1, 1, 0, map[model.Cleared]int{model.ClearedAgentReplied: 1}, &Percentiles{3600, 3600}},
		{model.KindMultipleOpenTurns, 1, 1, 0, map[model.Cleared]int{model.ClearedOneOpenTurn: 1}, &Percentiles{3600, 3600}},
		{model.KindShadowedClarification, 1, 1, 0, map[model.Cleared]int{model.ClearedAnswered: 1}, &Percentiles{3600, 3600}},
		// Never counted under the kind it was asked as.
		{model.KindUnansweredClarification, 0, 0, 0, map[model.Cleared]int{}, nil},
		{model.KindPendingPermission, 1, 0, 1, map[model.Cleared]int{}, nil},
		// Time to clear from its since, 7 h, though only 1 h was in the window.
		{model.KindNeverStarted, 0, 1, 0, map[model.Cleared]int{model.ClearedTurnCompleted: 1}, &Percentiles{7 * 3600, 7 * 3600}},
	} {
		k := kinds[c.kind]
		if k.Opened != c.opened || k.Cleared != c.cleared || k.StillOpen != c.stillOpen || !reflect.DeepEqual(k.ClearedBy, c.by) || !reflect.DeepEqual(k.TimeToClear, c.ttc) {
			t.Errorf("%s: %+v (time to clear %+v), want opened %d cleared %d %v still open %d, %+v", c.kind, k, k.TimeToClear, c.opened, c.cleared, c.by, c.stillOpen, c.ttc)
		}
	}
	// s1 1.5 h + s4 1 h (cut at the window) + s6 2 h; s2 1 h + s3 0.5 h.
	if r.AgentTimeLostSeconds != 16200 || r.HumanOwedSeconds != 5400 {
		t.Errorf("lost %d, owed %d; want 16200, 5400", r.AgentTimeLostSeconds, r.HumanOwedSeconds)
	}
	wantWS := []Workspace{{"ws-c", 7200, 0, 1}, {"ws-a", 5400, 3600, 3}, {"ws-b", 3600, 1800, 2}}
	if !reflect.DeepEqual(r.TopWorkspaces, wantWS) {
		t.Errorf("workspaces %+v, want %+v", r.TopWorkspaces, wantWS)
	}
	if len(r.TopTasks) != 5 || r.TopTasks[0].TaskID != "t6" || r.TopTasks[1].TaskID != "t1" || r.TopTasks[1].TaskTitle != "Task t1" || r.TopTasks[1].AgentTimeLostSeconds != 5400 {
		t.Errorf("tasks %+v", r.TopTasks)
	}
	// Two UTC days; what lost time fell on each adds up to the total.
	if len(r.Days) != 2 || r.Days[0].Day != "2026-11-28" || r.Days[0].AgentTimeLostSeconds != 3600 || r.Days[1].AgentTimeLostSeconds != 12600 ||
		r.Days[1].HumanOwedSeconds != 5400 || r.Days[1].Opened[model.KindStalledTurn] != 2 || r.Days[0].Cleared[model.KindNeverStarted] != 1 {
		t.Errorf("days %+v", r.Days)
	}
	// 24 hours from 12:00; at 07:00 s1's stall (resolved on 08:00, so not
	// in that hour) and its restart were open.
	if len(r.Hours) != 24 {
		t.Fatalf("%d hours", len(r.Hours))
	}
	for _, c := range []struct {
		hour    string
		kind    model.Kind
		want    int
		comment string
	}{
		{"2026-11-29T07:00:00Z", model.KindStalledTurn, 1, "opened 07:15"},
		{"2026-11-29T07:00:00Z", model.KindInterruptedSession, 1, "opened 07:40"},
		{"2026-11-29T08:00:00Z", model.KindStalledTurn, 0, "resolved on the hour"},
		{"2026-11-29T08:00:00Z", model.KindInterruptedSession, 1, "resolved 08:30"},
		{"2026-11-28T12:00:00Z", model.KindNeverStarted, 1, "open since before the window"},
		{"2026-11-28T13:00:00Z", model.KindNeverStarted, 0, "resolved 13:00"},
		{"2026-11-29T11:00:00Z", model.KindPendingPermission, 1, "still open"},
		{"2026-11-29T11:00:00Z", model.KindStalledTurn, 1, "s6, still open"},
	} {
		for _, hr := range r.Hours {
			if hr.Hour == c.hour && hr.Open[c.kind] != c.want {
				t.Errorf("%s %s: %d open, want %d (%s)", c.hour, c.kind, hr.Open[c.kind], c.want, c.comment)
			}
		}
	}
	b, err := json.Marshal(r)
	if err != nil || len(b) == 0 {
		t.Fatal(err)
	}
}

// TestCovers: the report says which part of the window its data covers:
// what the retention kept, and where a read the ledger cut starts.
func TestCovers(t *testing.T) {
	cases := []struct {
		name      string
		in        Input
		from      string
		complete  bool
		truncated bool
	}{
		{"within the retention", Input{From: t0.Add(-7 * 24 * h), Until: t0, Now: t0, Retention: 720 * h}, "2026-11-22T12:00:00Z", true, false},
		// Asked for 60 days of a ledger that keeps 30.
		{"beyond the retention", Input{From: t0.Add(-60 * 24 * h), Until: t0, Now: t0, Retention: 720 * h}, "2026-10-30T12:00:00Z", false, false},
		// The read stopped at the 1,000th newest: what opened before may be missing.
		{"cut", Input{From: t0.Add(-24 * h), Until: t0, Now: t0, Retention: 720 * h, Truncated: true,
			Episodes: []Episode{ep(model.KindStalledTurn, "s", "t", "w", 3*h, 2*h, 0, ""), ep(model.KindStalledTurn, "s", "t", "w", 6*h, 5*h, 0, "")}},
			"2026-11-29T07:00:00Z", false, true},
	}
	for _, c := range cases {
		got := Compute(c.in).Covers
		if got.From != c.from || got.Complete != c.complete || got.Truncated != c.truncated || got.Until != "2026-11-29T12:00:00Z" || got.RetentionSeconds != 2592000 {
			t.Errorf("%s: %+v, want from %s complete %v", c.name, got, c.from, c.complete)
		}
	}
}

// TestPercentiles: nearest rank, in whole seconds.
func TestPercentiles(t *testing.T) {
	secs := func(n ...int) []time.Duration {
		var out []time.Duration
		for _, s := range n {
			out = append(out, time.Duration(s)*time.Second)
		}
		return out
	}
	oneTo := func(n int) []time.Duration {
		var out []time.Duration
		for i := n; i >= 1; i-- { // unsorted
			out = append(out, time.Duration(i)*time.Second)
		}
		return out
	}
	cases := []struct {
		name string
		ds   []time.Duration
		want *Percentiles
	}{
		{"none", nil, nil},
		{"one", secs(42), &Percentiles{42, 42}},
		{"two: the median is the first", secs(10, 20), &Percentiles{10, 20}},
		{"1..10", oneTo(10), &Percentiles{5, 9}},
		{"1..100", oneTo(100), &Percentiles{50, 90}},
		{"a fraction of a second is cut", []time.Duration{1500 * time.Millisecond}, &Percentiles{1, 1}},
	}
	for _, c := range cases {
		if got := percentiles(c.ds); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestUnion: a session's spans merged, so that no time counts twice.
func TestUnion(t *testing.T) {
	at := func(mins int) time.Time { return t0.Add(time.Duration(mins) * time.Minute) }
	cases := []struct {
		name string
		in   []span
		want []span
	}{
		{"none", nil, nil},
		{"apart", []span{{at(30), at(40)}, {at(0), at(10)}}, []span{{at(0), at(10)}, {at(30), at(40)}}},
		{"overlapping", []span{{at(0), at(20)}, {at(10), at(30)}}, []span{{at(0), at(30)}}},
		{"inside", []span{{at(0), at(60)}, {at(10), at(20)}}, []span{{at(0), at(60)}}},
		{"touching", []span{{at(0), at(10)}, {at(10), at(20)}}, []span{{at(0), at(20)}}},
	}
	for _, c := range cases {
		if got := union(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestLostKinds: which kinds are agent time, which human-owed, which
// neither.
func TestLostKinds(t *testing.T) {
	for _, k := range model.Kinds {
		agent, human := Lost(k)
		want := map[model.Kind][2]bool{
			model.KindStalledTurn: {true, false}, model.KindNeverStarted: {true, false}, model.KindInterruptedSession: {true, false},
			model.KindUnansweredClarification: {false, true}, model.KindShadowedClarification: {false, true}, model.KindPendingPermission: {false, true},
			model.KindMultipleOpenTurns: {false, false},
		}[k]
		if agent != want[0] || human != want[1] {
			t.Errorf("%s: agent %v human %v, want %v", k, agent, human, want)
		}
	}
}

// TestWindowInThePast: a window that ended before now counts an episode
// resolved after its end as still open, its time up to the end, spread
// over the UTC days it fell on.
func TestWindowInThePast(t *testing.T) {
	eps := []Episode{ep(model.KindStalledTurn, "s1", "t1", "ws", 40*h, 39*h, 20*h, model.ClearedTurnCompleted)}
	r := Compute(Input{Episodes: eps, From: t0.Add(-48 * h), Until: t0.Add(-24 * h), Now: t0, Retention: 720 * h})
	k := r.Kinds[4] // stalled_turn, in model.Kinds' order
	if k.Kind != model.KindStalledTurn || k.StillOpen != 1 || k.Cleared != 0 || k.Opened != 1 {
		t.Errorf("%+v", k)
	}
	// 27 Nov 20:00 to 28 Nov 12:00: 4 h on the 27th, 12 h on the 28th.
	if r.AgentTimeLostSeconds != 16*3600 || len(r.Days) != 2 || r.Days[0].AgentTimeLostSeconds != 4*3600 || r.Days[1].AgentTimeLostSeconds != 12*3600 {
		t.Errorf("lost %d, days %+v", r.AgentTimeLostSeconds, r.Days)
	}
}
