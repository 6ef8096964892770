package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

// permissionAndShadowed is a kandev with a permission request offering
// two options (its request id and options in its metadata, as kandev
// writes them) and a question kandev hides (a resume's lifecycle turn
// after the real one: kandev refuses its answer).
func permissionAndShadowed(now time.Time) kandevdb.Dataset {
	m := time.Minute
	b := kandevdb.NewBuilder(now)
	s := b.Session("sess-perm", "Clean build scripts", "ws-ops", "RUNNING", 40*m, "")
	s.Turn("turn-perm", 30*m, -1, "").Agent("tool_call", 22*m).Message("agent", "permission_request", "run `rm -rf build/`", 20*m,
		`{"pending_id":"perm-1","tool_call_id":"tc-1","status":"pending","request_id":"req-1",`+
			`"options":[{"option_id":"allow","name":"Allow once","kind":"allow_once"},{"option_id":"reject","name":"Reject","kind":"reject_once"}]}`)
	s = b.Session("sess-shadowed", "Upgrade Postgres driver", "ws-ops", "WAITING_FOR_INPUT", 90*m, "")
	s.Turn("turn-real", 80*m, -1, "").Agent("tool_call", 75*m).
		Clarification("p-pg", "q-pg", "Driver choice", "Pick A or B?", []kandevdb.QuestionOpt{{ID: "a", Label: "pgx"}, {ID: "b", Label: "lib/pq"}}, "pending", 70*m, nil)
	s.Turn("turn-boot", 79*m, 79*m, "").Message("agent", "script_execution", "boot", 79*m, `{"script_type": "agent_boot", "is_resuming": true}`)
	return b.DS
}

// TestSlackPermissionAndSendAsMessage: through the real binary, a
// permission's button sends one permission.respond with kandev's request
// id, pending id and the option chosen; a hidden question's "Send as
// message", clicked twice, sends one message.add with the option chosen
// and a client_message_id, and answers nothing (kandev would refuse).
func TestSlackPermissionAndSendAsMessage(t *testing.T) {
	e := newEnv(t, permissionAndShadowed(time.Now()), "sqlite", "")
	e.ws.AddPermission("perm-1", "req-1")
	listen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startInteractive(t, e, "    mode: http\n    listen: "+listen+"\n    signing_secret_file: {{.dir}}/signing\n", "", 2)
	posts := firstPosts(e.slack)
	if c := post(t, listen, click(t, posts["sess-perm"], "U0ALICE", "Allow once"), nil); c != 200 {
		t.Fatalf("permission click: %d", c)
	}
	waitFor(t, 20*time.Second, "kandev's permission answered", func() bool { return len(e.ws.PermissionAnswers()) > 0 })
	waitFor(t, 20*time.Second, "the permission's message edited to say what was done", func() bool {
		for _, m := range e.slack.Messages() {
			b, _ := json.Marshal(m.Blocks)
			if m.TS == posts["sess-perm"].TS && strings.Contains(string(b), `Allowed (allow once) by \u003c@U0ALICE\u003e from Slack`) {
				return true
			}
		}
		return false
	})
	send := click(t, posts["sess-shadowed"], "U0ALICE", "Send “pgx” as message")
	for i := 0; i < 2; i++ {
		if c := post(t, listen, send, nil); c != 200 {
			t.Fatalf("send-as-message click %d: %d", i, c)
		}
	}
	waitFor(t, 20*time.Second, "the answer sent as a message", func() bool { return len(e.ws.Messages()) > 0 })
	time.Sleep(3 * time.Second) // cycles more: nothing is sent again
	if p := e.ws.PermissionAnswers(); len(p) != 1 || p[0].RequestID != "req-1" || p[0].PendingID != "perm-1" || p[0].OptionID != "allow" ||
		p[0].SessionID != "sess-perm" {
		t.Fatalf("permission answers %+v", p)
	}
	msgs := e.ws.Messages()
	if len(msgs) != 1 || msgs[0].SessionID != "sess-shadowed" || msgs[0].ClientMessageID == "" || e.ws.Duplicates() != 0 ||
		!regexp.MustCompile(`pgx`).MatchString(msgs[0].Content) {
		t.Fatalf("messages %+v (duplicates %d)", msgs, e.ws.Duplicates())
	}
	if r := e.ws.Responds(); len(r) != 0 {
		t.Fatalf("kandev's respond was called for a hidden question: %+v", r)
	}
}

// TestNotifyTestChecksSocketMode: notify-test opens a Socket Mode
// connection with the app-level token, and says what is wrong with a
// token Slack refuses or one that is not an app-level token.
func TestNotifyTestChecksSocketMode(t *testing.T) {
	e := newEnv(t, permissionAndShadowed(time.Now()), "sqlite", "")
	interactiveConfig(t, e, "    mode: socket\n", "")
	for _, c := range []struct {
		token, want string
		code        int
	}{
		{appToken, "Socket Mode: connected with the app-level token: ok", 0},
		{"xapp-1-revoked", "invalid_auth", 1},
		{slackToken, "not an app-level token", 1},
	} {
		r := watchdogd(t, append(e.environ(), "WATCHDOGD_SLACK_APP_TOKEN="+c.token), "notify-test", "--config", e.cfg, "--workspace", "ws-ops")
		if r.code != c.code || !strings.Contains(r.stdout+r.stderr, c.want) || strings.Contains(r.stdout+r.stderr, c.token) {
			t.Fatalf("notify-test with %s: exit %d\n%s%s", c.token[:5], r.code, r.stdout, r.stderr)
		}
	}
	if n := e.slack.Connections(); n != 1 {
		t.Fatalf("Socket Mode connections %d, want 1", n)
	}
}

// TestSlackFormAnswersABundle: through the real binary, "Answer…" on a
// bundle of two questions opens a form (views.open) with a select and a
// text field per question; submitted with the second left blank, it is
// answered with Slack's "errors" on that field (the form stays open) and
// nothing is answered; then, one option and one text, it answers kandev
// once with both.
func TestSlackFormAnswersABundle(t *testing.T) {
	m := time.Minute
	b := kandevdb.NewBuilder(time.Now())
	s := b.Session("sess-bundle", "Auth rework", "ws-ops", "WAITING_FOR_INPUT", time.Hour, "")
	s.Turn("turn-bundle", 45*m, -1, "").Agent("message", 40*m).
		Clarification("p-auth", "q1", "Session storage", "Cookie or JWT?", []kandevdb.QuestionOpt{{ID: "cookie", Label: "Cookie"}, {ID: "jwt", Label: "JWT"}},
			"pending", 35*m, map[string]any{"question_index": 0, "question_total": 2}).
		Clarification("p-auth", "q2", "Token lifetime", "How long should a login last?", nil, "", 35*m, map[string]any{"question_index": 1, "question_total": 2})
	e := newEnv(t, b.DS, "sqlite", "")
	e.ws.AddBundle("p-auth", "q1", "q2")
	listen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startInteractive(t, e, "    mode: http\n    listen: "+listen+"\n    signing_secret_file: {{.dir}}/signing\n", "", 1)
	first := firstPosts(e.slack)["sess-bundle"]
	if c := post(t, listen, click(t, first, "U0ALICE", "Answer…"), nil); c != 200 {
		t.Fatalf("form click: %d", c)
	}
	views := e.slack.Views()
	if len(views) != 1 {
		t.Fatalf("views opened: %d", len(views))
	}
	var view struct {
		CallbackID      string           `json:"callback_id"`
		PrivateMetadata string           `json:"private_metadata"`
		Blocks          []map[string]any `json:"blocks"`
	}
	if err := json.Unmarshal([]byte(views[0]), &view); err != nil || len(view.Blocks) != 3 {
		t.Fatalf("the form %s: %v", views[0], err)
	}
	jwt := optionValue(t, view.Blocks, "q0", "JWT")
	values := map[string]any{"q0": map[string]any{"choice": map[string]any{"type": "static_select", "selected_option": map[string]any{"value": jwt}}}}
	submit := func() []byte {
		b, _ := json.Marshal(map[string]any{"type": "view_submission", "user": map[string]any{"id": "U0ALICE"},
			"view": map[string]any{"callback_id": view.CallbackID, "private_metadata": view.PrivateMetadata, "state": map[string]any{"values": values}}})
		return b
	}
	// The second question left blank: Slack is asked to keep the form
	// open with that field marked; nothing is answered.
	code, body := postBody(t, listen, string(submit()))
	var reply struct {
		Action string            `json:"response_action"`
		Errors map[string]string `json:"errors"`
	}
	if err := json.Unmarshal([]byte(body), &reply); code != 200 || err != nil || reply.Action != "errors" || len(reply.Errors) != 1 ||
		!strings.Contains(reply.Errors["t1"], "Write an answer") {
		t.Fatalf("a form with a question left blank: %d %q", code, body)
	}
	values["t1"] = map[string]any{"text": map[string]any{"type": "plain_text_input", "value": "One day"}}
	if code, body := postBody(t, listen, string(submit())); code != 200 || body != "" {
		t.Fatalf("form submission: %d %q", code, body)
	}
	waitFor(t, 20*time.Second, "kandev answered", func() bool { return len(e.ws.Responds()) > 0 })
	time.Sleep(2 * time.Second)
	r := e.ws.Responds()
	if len(r) != 1 || !r[0].Claimed || len(r[0].Answers) != 2 || r[0].Answers[0].Options[0] != "jwt" || r[0].Answers[1].Text != "One day" {
		t.Fatalf("kandev's responds %+v", r)
	}
}

// optionValue is the value of the option labelled label of the select in
// the form's block block.
func optionValue(t *testing.T, blocks []map[string]any, block, label string) string {
	t.Helper()
	for _, b := range blocks {
		if b["block_id"] != block {
			continue
		}
		el, _ := b["element"].(map[string]any)
		opts, _ := el["options"].([]any)
		for _, o := range opts {
			o, _ := o.(map[string]any)
			if txt, _ := o["text"].(map[string]any); txt["text"] == label {
				v, _ := o["value"].(string)
				return v
			}
		}
	}
	t.Fatalf("no option %q in block %s", label, block)
	return ""
}

// holdLane holds a lane's breaker in the SQLite ledger for an hour, as a
// daemon does when its destination stops answering.
func holdLane(t *testing.T, e *env, outlet, destination string) {
	t.Helper()
	db, err := sql.Open("sqlite", strings.TrimPrefix(e.state, "sqlite://"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	now := time.Now()
	if _, err := db.Exec(`INSERT INTO destination_holds (outlet, destination, reason, since_us, until_us, failures) VALUES (?, ?, 'timeout', ?, ?, 1)`,
		outlet, destination, now.UnixMicro(), now.Add(time.Hour).UnixMicro()); err != nil {
		t.Fatal(err)
	}
}

// TestSlackClickWhileKandevLaneHeld: a click's answer goes through
// kandev's lane; while that lane's breaker holds (kandev stopped
// answering a while ago), a click is tried once anyway: kandev answering
// it answers the permission and opens the lane; kandev failing it fails
// the click at once, and the person who clicked is told why.
func TestSlackClickWhileKandevLaneHeld(t *testing.T) {
	e := newEnv(t, permissionAndShadowed(time.Now()), "sqlite", "")
	e.ws.AddPermission("perm-1", "req-1")
	listen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	d := startInteractive(t, e, "    mode: http\n    listen: "+listen+"\n    signing_secret_file: {{.dir}}/signing\n", "", 2)
	posts := firstPosts(e.slack)
	holdLane(t, e, "kandev", "kandev")
	e.ws.SetFail(func(action string) string {
		if action == "message.add" {
			return "INTERNAL_ERROR"
		}
		return ""
	})
	if c := post(t, listen, click(t, posts["sess-shadowed"], "U0ALICE", "Send “pgx” as message"), nil); c != 200 {
		t.Fatalf("send-as-message click: %d", c)
	}
	waitFor(t, 20*time.Second, "the person told the message did not go", func() bool {
		for _, m := range e.slack.Ephemerals() {
			if m.User == "U0ALICE" && strings.Contains(m.Text, "kandev is not answering") && strings.Contains(m.Text, "tried once") {
				return true
			}
		}
		return false
	})
	if c := post(t, listen, click(t, posts["sess-perm"], "U0ALICE", "Allow once"), nil); c != 200 {
		t.Fatalf("permission click: %d", c)
	}
	waitFor(t, 20*time.Second, "kandev's permission answered, its lane held", func() bool { return len(e.ws.PermissionAnswers()) == 1 })
	waitFor(t, 10*time.Second, "kandev's lane up", func() bool {
		return d.metric(t, `watchdogd_lane_up{destination="kandev",outlet="kandev"}`) == 1
	})
	if n := len(logLines(d.out.String(), "lane up")); n != 1 {
		t.Errorf("lane up logged %d times, want once", n)
	}
}
