package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOperatorCommandsJSON: episodes list, episodes show and silence list
// print --output json (or amtool's -o json) as documented: schema_version
// 1, the table's columns in snake_case plus ids, times RFC 3339 UTC; and
// amtool's spellings (silence add --duration, silence query) work.
func TestOperatorCommandsJSON(t *testing.T) {
	e := newEnv(t, world(time.Now()), "sqlite", "")
	e.once()
	var list struct {
		SchemaVersion int              `json:"schema_version"`
		Episodes      []map[string]any `json:"episodes"`
	}
	r := watchdogd(t, e.environ(), "episodes", "list", "--config", e.cfg, "--output", "json")
	if err := json.Unmarshal([]byte(r.stdout), &list); r.code != 0 || err != nil || list.SchemaVersion != 1 || len(list.Episodes) == 0 {
		t.Fatalf("episodes list --output json: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	table := watchdogd(t, e.environ(), "episodes", "list", "--config", e.cfg)
	if rows := strings.Count(strings.TrimSpace(table.stdout), "\n"); rows != len(list.Episodes) {
		t.Errorf("the table lists %d episodes, the JSON %d", rows, len(list.Episodes))
	}
	episodeKeys := []string{"age_seconds", "cleared", "id", "kind", "pending_id", "resolution", "resolved_at", "session_id", "since", "state",
		"task_id", "task_title", "turn_id", "workspace_id"}
	for _, ep := range list.Episodes {
		checkKeys(t, "episode", ep, episodeKeys)
		checkTime(t, "since", ep["since"])
		if !strings.Contains(table.stdout, ep["id"].(string)) || ep["state"] != "open" {
			t.Errorf("episode %v: not in the table, or not open", ep)
		}
	}

	var show struct {
		SchemaVersion int              `json:"schema_version"`
		Episodes      []map[string]any `json:"episodes"`
	}
	id := list.Episodes[0]["id"].(string)
	r = watchdogd(t, e.environ(), "episodes", "show", id, "--config", e.cfg, "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &show); r.code != 0 || err != nil || show.SchemaVersion != 1 || len(show.Episodes) != 1 {
		t.Fatalf("episodes show -o json: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	checkKeys(t, "episode", show.Episodes[0], append(slices.Clone(episodeKeys), "actions"))
	actions, _ := show.Episodes[0]["actions"].([]any)
	if show.Episodes[0]["id"] != id || len(actions) == 0 {
		t.Fatalf("episodes show: %v", show.Episodes[0])
	}
	for _, a := range actions {
		checkKeys(t, "action", a.(map[string]any), []string{"action", "attempts", "channel", "conflicts", "delivered_channel",
			"delivered_ts", "error", "seq", "state", "updated_at"})
		checkTime(t, "updated_at", a.(map[string]any)["updated_at"])
	}

	r = watchdogd(t, e.environ(), "silence", "add", "--config", e.cfg, "--match", "session_id=sess-stalled", "--duration", "2h", "--comment", "deploy")
	sid := strings.TrimSpace(r.stdout)
	if r.code != 0 || sid == "" {
		t.Fatalf("silence add --duration: exit %d %s", r.code, r.stderr)
	}
	if q := watchdogd(t, e.environ(), "silence", "query", "--config", e.cfg); q.code != 0 || !strings.Contains(q.stdout, sid) {
		t.Fatalf("silence query: exit %d\n%s%s", q.code, q.stdout, q.stderr)
	}
	var silences struct {
		SchemaVersion int              `json:"schema_version"`
		Silences      []map[string]any `json:"silences"`
	}
	r = watchdogd(t, e.environ(), "silence", "list", "--config", e.cfg, "--output", "json")
	if err := json.Unmarshal([]byte(r.stdout), &silences); r.code != 0 || err != nil || silences.SchemaVersion != 1 || len(silences.Silences) != 1 {
		t.Fatalf("silence list --output json: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	s := silences.Silences[0]
	checkKeys(t, "silence", s, []string{"comment", "created_at", "created_by", "expired_at", "id", "match", "matchers", "state", "until"})
	created, until := checkTime(t, "created_at", s["created_at"]), checkTime(t, "until", s["until"])
	if s["id"] != sid || s["state"] != "active" || until.Sub(created) != 2*time.Hour ||
		s["match"].(map[string]any)["session_id"] != "sess-stalled" || len(s["match"].(map[string]any)) != 1 ||
		fmt.Sprint(s["matchers"]) != `[session_id="sess-stalled"]` || s["created_by"] != "oncall" {
		t.Errorf("silence: %v", s)
	}
}

// checkKeys wants exactly the documented keys.
func checkKeys(t *testing.T, what string, m map[string]any, want []string) {
	t.Helper()
	var got []string
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s keys %v, want %v", what, got, want)
	}
}

// checkTime wants an RFC 3339 time in UTC.
func checkTime(t *testing.T, what string, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || !strings.HasSuffix(s, "Z") {
		t.Errorf("%s %q: not RFC 3339 UTC (%v)", what, s, err)
	}
	return tm
}
