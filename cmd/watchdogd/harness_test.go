package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/kandevapi/kandevtest"
	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
)

const slackToken = "xoxb-test-token-do-not-log"
const kandevToken = "kandev_pat_test-token-do-not-log"

// env is one test's world: a kandev database, a Slack, a kandev WebSocket,
// a ledger and a config file, driven through the real binary.
type env struct {
	t      *testing.T
	dir    string
	kandev *kandevdb.SQLite
	slack  *slacktest.Server
	ws     *kandevtest.WSServer
	state  string
	cfg    string
	vars   map[string]any
	start  time.Time
}

const baseConfig = `
database:
  url: sqlite://{{.dir}}/kandev.db
kandev:
  base_url: {{.ws}}
  token_file: {{.dir}}/kandev-token
  timeout: 900ms
state:
  url: {{.state}}
  claim_ttl: 2s
slack:
  api_url: {{.slack}}
  timeout: 1s
  default_channel: C-alerts
  max_messages_per_cycle: 100
  routes:
    - match: {workspace_id: ws-ops}
      channel: C-ops
    - match: {workspace_id: ws-docs}
      channel: C-docs
log:
  level: debug
  format: json
{{.extra}}`

// newEnv builds the world around ds (timestamps relative to now). state is
// "sqlite" or a PostgreSQL URL.
func newEnv(t *testing.T, ds kandevdb.Dataset, state string, extra string) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), start: time.Now()}
	var err error
	if e.kandev, err = kandevdb.CreateSQLite(filepath.Join(e.dir, "kandev.db"), kandevdb.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.kandev.Close() })
	if err := e.kandev.Write(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	e.startServers(ds, false)
	if err := os.WriteFile(filepath.Join(e.dir, "kandev-token"), []byte(kandevToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.state = state
	if state == "sqlite" {
		e.state = "sqlite://" + filepath.Join(e.dir, "state.db")
	}
	e.vars = map[string]any{"dir": e.dir, "ws": e.ws.BaseURL(), "state": e.state, "slack": e.slack.APIURL(), "extra": extra}
	e.writeConfig()
	return e
}

// startServers starts a Slack and a kandev WebSocket server for ds, over
// HTTPS with httptest's certificate when tls is set, and points the config
// at them.
func (e *env) startServers(ds kandevdb.Dataset, tls bool) {
	states := map[string]string{}
	for _, s := range ds.Sessions {
		states[s.ID] = s.State
	}
	if tls {
		e.slack, e.ws = slacktest.NewTLS(slackToken), kandevtest.NewWSServerTLS(states)
	} else {
		e.slack, e.ws = slacktest.New(slackToken), kandevtest.NewWSServer(states)
	}
	e.ws.Token = kandevToken
	e.t.Cleanup(e.slack.Close)
	e.t.Cleanup(e.ws.Close)
	if e.vars != nil {
		e.vars["ws"], e.vars["slack"] = e.ws.BaseURL(), e.slack.APIURL()
		e.writeConfig()
	}
}

func (e *env) writeConfig() {
	e.t.Helper()
	var b bytes.Buffer
	template.Must(template.New("cfg").Parse(baseConfig)).Execute(&b, e.vars)
	e.cfg = filepath.Join(e.dir, "watchdogd.yaml")
	if err := os.WriteFile(e.cfg, b.Bytes(), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) environ() []string {
	// USER names who adds a silence, as a shell has it; the config is
	// given, never found.
	return []string{"WATCHDOGD_SLACK_TOKEN=" + slackToken, "WATCHDOGD_DATABASE_URL=", "USER=oncall", "WATCHDOGD_CONFIG="}
}

// once runs `watchdogd run --once` to completion.
func (e *env) once(args ...string) result {
	e.t.Helper()
	r := watchdogd(e.t, e.environ(), append([]string{"run", "--once", "--config", e.cfg}, args...)...)
	if r.code != 0 {
		e.t.Fatalf("run --once: exit %d\n%s", r.code, r.stderr)
	}
	return r
}

// start runs `watchdogd run --once` in the background.
func (e *env) startOnce() (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(binary, "run", "--once", "--config", e.cfg)
	cmd.Env = append(os.Environ(), e.environ()...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	return cmd, &out
}

func (e *env) ledger() *ledger.Store {
	e.t.Helper()
	s, err := ledger.Open(context.Background(), e.state)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = s.Close() })
	return s
}

// episodes lists the ledger's episodes, open or not.
func (e *env) episodes() []model.Episode {
	e.t.Helper()
	eps, err := e.ledger().Episodes(context.Background(), false, 10000)
	if err != nil {
		e.t.Fatal(err)
	}
	return eps
}

// actions lists every action in the ledger.
func (e *env) actions() []model.Action {
	e.t.Helper()
	s := e.ledger()
	eps, err := s.Episodes(context.Background(), false, 10000)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []model.Action
	for _, ep := range eps {
		full, err := s.Episode(context.Background(), ep.ID)
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, full.Actions...)
	}
	return out
}

// exactlyOnce checks the invariant: every delivered Slack post is in Slack
// exactly once (by its key), nothing is in Slack that the ledger did not
// decide, later steps sit in their first message's thread, and nothing is
// left in flight.
func (e *env) exactlyOnce() (posts int) {
	e.t.Helper()
	byKey := map[string][]slacktest.Message{}
	for _, m := range e.slack.Messages() {
		if m.Metadata == nil {
			e.t.Errorf("a Slack message without watchdogd's metadata: %q", m.Text)
			continue
		}
		k := fmt.Sprint(m.Metadata.EventPayload["key"])
		byKey[k] = append(byKey[k], m)
	}
	acts := map[string]model.Action{}
	for _, a := range e.actions() {
		acts[a.Key] = a
	}
	for k, ms := range byKey {
		if len(ms) != 1 {
			e.t.Errorf("key %s posted %d times", k, len(ms))
		}
		a, ok := acts[k]
		if !ok {
			e.t.Errorf("key %s in Slack but not in the ledger", k)
			continue
		}
		if a.State != model.StateDelivered {
			e.t.Errorf("key %s in Slack but %s in the ledger", k, a.State)
		}
		if a.ParentKey != "" {
			if p := acts[a.ParentKey]; p.State == model.StateDelivered && ms[0].ThreadTS != p.ResultTS {
				e.t.Errorf("key %s not in its first message's thread", k)
			}
		} else if ms[0].ThreadTS != "" {
			e.t.Errorf("first post %s is a thread reply", k)
		}
	}
	for k, a := range acts {
		switch {
		case a.State == model.StatePending || a.State == model.StateClaimed:
			e.t.Errorf("action %s (%s) still %s: %s", k, a.Seq, a.State, a.Error)
		case a.Kind == model.ActionSlack && a.State == model.StateDelivered && len(byKey[k]) == 0:
			e.t.Errorf("action %s delivered but not in Slack", k)
		}
		if a.Kind == model.ActionSlack && a.State == model.StateDelivered {
			posts++
		}
	}
	return posts
}

// world is the e2e dataset: one session per finding kind, in three
// workspaces, plus a question with 30 options and a 20,000-character prompt.
func world(now time.Time) kandevdb.Dataset {
	ds := kandevdb.Demo(now)
	b := kandevdb.NewBuilder(now)
	var opts []kandevdb.QuestionOpt
	for i := 0; i < 30; i++ {
		opts = append(opts, kandevdb.QuestionOpt{ID: fmt.Sprint(i), Label: fmt.Sprintf("Option %d <!channel>", i), Description: strings.Repeat("detail ", 30)})
	}
	s := b.Session("sess-huge", "Huge question <!here>", "ws-docs", "WAITING_FOR_INPUT", time.Hour, "")
	s.Turn("turn-huge", 50*time.Minute, -1, "").Clarification("p-huge", "q-huge", "Pick one", strings.Repeat("Long prompt. ", 1540), opts, "", 30*time.Minute, nil)
	ds.Append(b.DS)
	return ds
}

// logLines returns the JSON log lines of a run that contain substr.
func logLines(out, substr string) []string {
	var hits []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, substr) {
			hits = append(hits, l)
		}
	}
	return hits
}

// writeConfigText rewrites the config from another template.
func writeConfigText(t *testing.T, e *env, text string) {
	t.Helper()
	var b bytes.Buffer
	if err := template.Must(template.New("cfg").Parse(text)).Execute(&b, e.vars); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.cfg, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// killedHolder makes an action look like its holder was SIGKILLed right
// after delivering it: claimed, the claim long stale. It writes the SQLite
// ledger file directly, as the dead process left it.
func killedHolder(e *env, key string) error {
	db, err := sql.Open("sqlite", strings.TrimPrefix(e.state, "sqlite://"))
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	_, err = db.Exec(`UPDATE actions SET state = 'claimed', claim_token = 'killed', claimed_us = 1 WHERE key = ?`, key)
	return err
}
