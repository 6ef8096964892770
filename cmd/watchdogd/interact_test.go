package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/interact"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/notify/kandevapi/kandevtest"
	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
)

const (
	signingSecret = "slack-signing-secret-do-not-log"
	appToken      = "xapp-1-app-token-do-not-log"
)

// questions is a kandev with two sessions waiting on a one-question
// bundle each (workspace ws-ops: channel C-ops), which kandev's respond
// knows too.
func questions(now time.Time, ids ...string) kandevdb.Dataset {
	b := kandevdb.NewBuilder(now)
	opts := []kandevdb.QuestionOpt{{ID: "pgx", Label: "pgx"}, {ID: "pq", Label: "lib/pq"}}
	for _, id := range ids {
		s := b.Session("sess-"+id, "Pick a driver "+id, "ws-ops", "WAITING_FOR_INPUT", time.Hour, "")
		s.Turn("turn-"+id, 50*time.Minute, -1, "").Clarification("p-"+id, "q-"+id, "Which driver?", "Which SQL driver?", opts, "", 30*time.Minute, nil)
	}
	return b.DS
}

// interactiveEnv is an env whose config turns slack.interactivity on
// (mode and its settings in block), with a daemon running on it, and a
// question in sessions sess-a and sess-b.
func interactiveEnv(t *testing.T, block string, environ ...string) (*env, *daemonProc) {
	return interactiveEnvOf(t, block, "", []string{"a", "b"}, environ...)
}

// interactiveEnvOf is interactiveEnv with a question in each session
// sess-<id>.
func interactiveEnvOf(t *testing.T, block, more string, ids []string, environ ...string) (*env, *daemonProc) {
	t.Helper()
	e := newEnv(t, questions(time.Now(), ids...), "sqlite", "")
	for _, id := range ids {
		e.ws.AddBundle("p-"+id, "q-"+id)
	}
	return e, startInteractive(t, e, block, more, len(ids), environ...)
}

// interactiveConfig turns slack.interactivity on in e's config (mode and
// its settings in block; only U0ALICE may act) and returns the daemon's
// HTTP base URL; more is more config (a policy).
func interactiveConfig(t *testing.T, e *env, block, more string) string {
	t.Helper()
	e.slack.EnableSocketMode(appToken)
	if err := os.WriteFile(filepath.Join(e.dir, "signing"), []byte(signingSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(more, "policy:\n") {
		more = strings.Replace(more, "policy:\n", "policy:\n"+logStalls, 1)
	} else {
		more += "policy:\n" + logStalls
	}
	extra, base := daemonConfig(t, more)
	text := strings.Replace(baseConfig, "  routes:\n", "  interactivity:\n"+block+"    allowed_users: [U0ALICE]\n  routes:\n", 1)
	writeConfigText(t, e, text+extra)
	return base
}

// logStalls keeps the clicks' claims short (claim_ttl 2s, so that a
// killed holder's click is taken over at once): with Slack posts for
// stalled turns, their "Cancel turn and nudge" button would need a claim
// that outlives a cancel's settle wait, and these kandevs hold no stalled
// turn.
const logStalls = "  stalled_turn:\n    steps: [{after: 0s, action: log}]\n  never_started:\n    steps: [{after: 0s, action: log}]\n"

// startInteractive turns slack.interactivity on in e's config (mode and
// its settings in block; only U0ALICE may act), starts a daemon and waits
// for posts first messages with buttons.
func startInteractive(t *testing.T, e *env, block, more string, posts int, environ ...string) *daemonProc {
	t.Helper()
	d := e.startDaemon(interactiveConfig(t, e, block, more), environ...)
	d.waitView(t)
	waitFor(t, time.Duration(20+2*posts)*time.Second, "the first messages posted with buttons", func() bool { return len(firstPosts(e.slack)) == posts })
	return d
}

// firstPosts are the top-level messages carrying buttons, by session.
func firstPosts(s *slacktest.Server) map[string]slacktest.Message {
	out := map[string]slacktest.Message{}
	session := regexp.MustCompile("session `(sess-[a-z0-9]+)`")
	for _, m := range s.Messages() {
		b, _ := json.Marshal(m.Blocks)
		if m.ThreadTS == "" && strings.Contains(string(b), `"type":"actions"`) {
			if id := session.FindStringSubmatch(string(b)); id != nil {
				out[id[1]] = m
			}
		}
	}
	return out
}

// click is the block_actions payload of a click by user on the button of
// m whose text is label.
func click(t *testing.T, m slacktest.Message, user, label string) []byte {
	t.Helper()
	for _, b := range m.Blocks {
		els, _ := b["elements"].([]any)
		for _, el := range els {
			btn, _ := el.(map[string]any)
			txt, _ := btn["text"].(map[string]any)
			if txt["text"] != label {
				continue
			}
			p, _ := json.Marshal(map[string]any{"type": "block_actions", "user": map[string]any{"id": user}, "trigger_id": "trig-1",
				"container": map[string]any{"type": "message", "message_ts": m.TS, "channel_id": m.Channel},
				"channel":   map[string]any{"id": m.Channel}, "message": map[string]any{"ts": m.TS},
				"actions": []any{map[string]any{"type": "button", "action_id": btn["action_id"], "block_id": b["block_id"], "value": btn["value"]}}})
			return p
		}
	}
	t.Fatalf("no button %q on the message", label)
	return nil
}

// post sends payload to the HTTP endpoint at listen with headers h.
func post(t *testing.T, listen string, payload []byte, h http.Header) int {
	t.Helper()
	body := "payload=" + url.QueryEscape(string(payload))
	if h == nil {
		h = interact.Sign(config.Secret(signingSecret), []byte(body), time.Now())
	}
	req, err := http.NewRequest(http.MethodPost, "http://"+listen+interact.Path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// postBody sends a signed request whose payload is payload, and returns
// the answer's status and body.
func postBody(t *testing.T, listen, payload string) (int, string) {
	t.Helper()
	body := "payload=" + url.QueryEscape(payload)
	req, err := http.NewRequest(http.MethodPost, "http://"+listen+interact.Path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = interact.Sign(config.Secret(signingSecret), []byte(body), time.Now())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// ephemeralTo waits for an ephemeral reply to user containing text.
func ephemeralTo(t *testing.T, s *slacktest.Server, user, text string) {
	t.Helper()
	waitFor(t, 20*time.Second, "an ephemeral reply to "+user+" saying "+text, func() bool {
		for _, e := range s.Ephemerals() {
			if e.User == user && strings.Contains(e.Text, text) {
				return true
			}
		}
		return false
	})
}

// TestSlackHTTPClicks: through the real binary in the HTTP mode, a forged
// and a stale signature are refused with 401 and counted; a user outside
// the lists is told so; a click on an option, received twice, answers
// kandev once and edits the message once; a click on a question someone
// answered in kandev first says who won and changes nothing.
func TestSlackHTTPClicks(t *testing.T) {
	listen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	e, d := interactiveEnv(t, "    mode: http\n    listen: "+listen+"\n    signing_secret_file: {{.dir}}/signing\n")
	posts := firstPosts(e.slack)
	pgx := click(t, posts["sess-a"], "U0ALICE", "pgx")

	forged := interact.Sign(config.Secret("another secret"), []byte("payload="+url.QueryEscape(string(pgx))), time.Now())
	stale := interact.Sign(config.Secret(signingSecret), []byte("payload="+url.QueryEscape(string(pgx))), time.Now().Add(-10*time.Minute))
	if c1, c2 := post(t, listen, pgx, forged), post(t, listen, pgx, stale); c1 != 401 || c2 != 401 {
		t.Fatalf("forged %d, stale %d; want 401", c1, c2)
	}
	if n := d.metric(t, `watchdogd_slack_interactions_total{result="unauthorized"}`); n != 2 {
		t.Fatalf("unauthorized counted %v", n)
	}
	// Signed, but no interaction in it: a 400 in watchdogd's words, the
	// parser's own error (which quotes what it read) only in the log.
	for _, payload := range []string{`{"type": "block_actions", "actions": [{"action_id": "watchdogd:answer", "value": 7}]}`, "{not json"} {
		if code, body := postBody(t, listen, payload); code != 400 || body != "watchdogd cannot read this interaction\n" {
			t.Fatalf("an unreadable interaction: %d %q", code, body)
		}
	}

	if c := post(t, listen, click(t, posts["sess-a"], "U0BOB", "pgx"), nil); c != 200 {
		t.Fatalf("bob's click: %d", c)
	}
	ephemeralTo(t, e.slack, "U0BOB", "not allowed")
	if r := e.ws.Responds(); len(r) != 0 {
		t.Fatalf("kandev was answered for a refused click: %+v", r)
	}

	for i := 0; i < 2; i++ { // Slack retries a request; a double click
		if c := post(t, listen, pgx, nil); c != 200 {
			t.Fatalf("alice's click %d: %d", i, c)
		}
	}
	waitFor(t, 20*time.Second, "the message edited to say who answered", func() bool {
		m := e.slack.Messages()
		for _, x := range m {
			b, _ := json.Marshal(x.Blocks)
			if x.TS == posts["sess-a"].TS && strings.Contains(string(b), `Answered by \u003c@U0ALICE\u003e from Slack:* *pgx*`) {
				return !strings.Contains(string(b), `"type":"actions"`)
			}
		}
		return false
	})
	time.Sleep(3 * time.Second) // a few cycles more: nothing is sent again
	if r := e.ws.Responds(); len(r) != 1 || !r[0].Claimed || r[0].PendingID != "p-a" || r[0].Answers[0].Options[0] != "pgx" {
		t.Fatalf("kandev's responds %+v, want one pgx for p-a", r)
	}
	for _, m := range e.slack.Messages() {
		if m.TS == posts["sess-a"].TS && m.Edits != 1 {
			t.Fatalf("the message was edited %d times", m.Edits)
		}
	}

	e.ws.AnswerElsewhere("p-b", []kandevtest.Answer{{QuestionID: "q-b", Options: []string{"pgx"}}})
	if c := post(t, listen, click(t, posts["sess-b"], "U0ALICE", "lib/pq"), nil); c != 200 {
		t.Fatalf("click on an answered question: %d", c)
	}
	ephemeralTo(t, e.slack, "U0ALICE", "answered in kandev first")
	if r := e.ws.Responds(); len(r) != 2 || r[1].Claimed {
		t.Fatalf("kandev's responds %+v: the second must not be taken", r)
	}
	secretsAbsent(t, d, signingSecret)
}

// secretsAbsent checks that none of secrets is in the daemon's output,
// status page, API or metrics.
func secretsAbsent(t *testing.T, d *daemonProc, secrets ...string) {
	t.Helper()
	outs := []string{d.out.String()}
	for _, p := range []string{"/", "/api/v1/findings", "/metrics"} {
		_, body := d.get(p)
		outs = append(outs, body)
	}
	for _, o := range outs {
		for _, s := range secrets {
			if strings.Contains(o, s) {
				t.Fatalf("%q leaked:\n%.2000s", s, o)
			}
		}
	}
}

// TestSlackSocketModeClicks: through the real binary in Socket Mode, a
// click Slack sends twice and once more across a disconnect envelope (sent
// while no connection is open, so Slack sends it on the next) answers
// kandev once and edits the message once; every envelope is acknowledged,
// those sent on an open connection within Slack's 3 seconds.
func TestSlackSocketModeClicks(t *testing.T) {
	e, d := interactiveEnv(t, "    mode: socket\n", "WATCHDOGD_SLACK_APP_TOKEN="+appToken)
	waitFor(t, 20*time.Second, "a Socket Mode connection", func() bool { return e.slack.Connections() >= 1 })
	post := firstPosts(e.slack)["sess-a"]
	pgx, ts := click(t, post, "U0ALICE", "pgx"), post.TS // once edited, it carries no buttons
	first, second := e.slack.SendInteraction(pgx), e.slack.SendInteraction(pgx)
	waitFor(t, 10*time.Second, "both envelopes acknowledged", func() bool {
		_, a := e.slack.Acked(first)
		_, b := e.slack.Acked(second)
		return a && b
	})
	for _, id := range []string{first, second} {
		if d, _ := e.slack.Acked(id); d > 3*time.Second {
			t.Fatalf("envelope %s acknowledged after %s", id, d)
		}
	}
	e.slack.Disconnect()
	third := e.slack.SendInteraction(pgx)
	waitFor(t, 30*time.Second, "a new connection and the third envelope acknowledged", func() bool {
		_, ok := e.slack.Acked(third)
		return ok && e.slack.Connections() >= 2
	})
	waitFor(t, 20*time.Second, "the message edited", func() bool {
		for _, m := range e.slack.Messages() {
			if m.TS == ts && m.Edits > 0 {
				return true
			}
		}
		return false
	})
	time.Sleep(3 * time.Second)
	if r := e.ws.Responds(); len(r) != 1 || !r[0].Claimed {
		t.Fatalf("kandev's responds %+v, want one", r)
	}
	for _, m := range e.slack.Messages() {
		if m.TS == ts && m.Edits != 1 {
			t.Fatalf("the message was edited %d times", m.Edits)
		}
	}
	secretsAbsent(t, d, appToken)
}

// episodeOf is the id of the first episode of session in the ledger.
func episodeOf(t *testing.T, e *env, session string) string {
	t.Helper()
	eps, err := e.ledger().Episodes(context.Background(), false, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(eps) - 1; i >= 0; i-- {
		if eps[i].SessionID == session {
			return eps[i].ID
		}
	}
	t.Fatalf("no episode of %s", session)
	return ""
}
