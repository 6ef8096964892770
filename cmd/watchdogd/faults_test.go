//go:build faults

package main

// The fault suite (make test-faults): the real binary under outages,
// crashes, rate limits, bad rows and hostile input. Long durations are
// flags: CI runs the short versions, make soak the full ones whose figures
// go into docs/reliability.md. Each test logs its figures as "FIGURE …".

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
)

var (
	outage = flag.Duration("outage", 20*time.Second, "how long kandev's PostgreSQL (and the ledger's) is stopped")
	soak   = flag.Duration("soak", 90*time.Second, "how long the soak runs")
	kills  = flag.Int("kills", 50, "how many times the running daemon is SIGKILLed")
)

func figure(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Logf("FIGURE %s: %s", t.Name(), fmt.Sprintf(format, args...))
}

// lateQuestion adds a session whose question comes due `in` from now
// (clarification_after is 15m).
func lateQuestion(ds *kandevdb.Dataset, id string, in time.Duration) {
	b := kandevdb.NewBuilder(time.Now())
	s := b.Session(id, "Late question "+id, "ws-web", "WAITING_FOR_INPUT", time.Hour, "")
	s.Turn("turn-"+id, 40*time.Minute, -1, "").Clarification("p-"+id, "q1", "Due later", "Which one?", nil, "", 15*time.Minute-in, nil)
	ds.Append(b.DS)
}

func postsFor(e *env, title string) int {
	n := 0
	for _, m := range e.slack.Messages() {
		if strings.Contains(m.Text, title) {
			n++
		}
	}
	return n
}

// TestFaultSlack: a period of 500s, a 429 storm with Retry-After, answers
// slower than the client timeout (posts that landed), and invalid_auth on
// one channel: nothing lost, nothing duplicated, nothing sent inside a
// Retry-After window, one clear line and no retry for invalid_auth.
func TestFaultSlack(t *testing.T) {
	extra, base := daemonConfig(t, "")
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	var mu sync.Mutex
	var inside []string // requests that came inside a 429's window
	window := map[string][2]time.Time{}
	start := time.Now()
	phase := func() string {
		switch el := time.Since(start); {
		case el < 4*time.Second:
			return "500"
		case el < 10*time.Second:
			return "429"
		case el < 14*time.Second:
			return "slow"
		}
		return "ok"
	}
	e.slack.SetFaultByRequest(func(method string, n int, form url.Values) slacktest.Fault {
		ch := form.Get("channel")
		if ch == "C-docs" && method == "chat.postMessage" {
			return slacktest.Fault{SlackError: "invalid_auth"}
		}
		if method != "chat.postMessage" && method != "chat.update" {
			return slacktest.Fault{}
		}
		switch phase() {
		case "500":
			return slacktest.Fault{Status: 500}
		case "429":
			mu.Lock()
			defer mu.Unlock()
			if w, ok := window[ch]; ok && time.Now().Before(w[1]) {
				inside = append(inside, fmt.Sprintf("%s %s before its window ended", ch, time.Until(w[1]).Round(time.Millisecond)))
			}
			window[ch] = [2]time.Time{time.Now(), time.Now().Add(2 * time.Second)}
			return slacktest.Fault{Status: 429, RetryAfter: 2}
		case "slow":
			return slacktest.Fault{Delay: 1500 * time.Millisecond, Record: true}
		}
		return slacktest.Fault{}
	})
	d := e.startDaemon(base)
	// Until quiet: the slow phase's posts landed without an answer, and
	// their retries (after backoff) must find them in Slack's history. An
	// action that met every phase may be at its fifth or sixth attempt,
	// waiting 80 s or 160 s (notify.Backoff): the bound leaves room.
	waitFor(t, 300*time.Second, "every post but C-docs', and nothing in flight", func() bool {
		n := 0
		for _, m := range e.slack.Messages() {
			if m.Channel != "C-docs" {
				n++
			}
		}
		if n < 6 || time.Since(start) < 16*time.Second {
			return false
		}
		for _, a := range e.actions() {
			if !a.Terminal() {
				return false
			}
		}
		return true
	})
	time.Sleep(3 * time.Second)
	mu.Lock()
	early := inside
	mu.Unlock()
	if len(early) > 0 {
		t.Fatalf("%d requests inside a Retry-After window: %v", len(early), early)
	}
	failed := 0
	for _, a := range e.actions() {
		if a.State == "failed" {
			failed++
			if a.Attempts != 1 || !strings.Contains(a.Error, "invalid_auth") {
				t.Errorf("invalid_auth action: %d attempts, %q", a.Attempts, a.Error)
			}
		}
	}
	authLines := len(logLines(d.out.String(), "invalid_auth"))
	if failed != 2 || authLines != failed {
		t.Fatalf("%d failed actions, %d invalid_auth log lines", failed, authLines)
	}
	posts := e.exactlyOnce()
	// The storm is counted as Slack's 429s, apart from the budget's holds.
	answered := d.metric(t, `watchdogd_slack_rate_limited_total{reason="429"}`)
	if answered < 1 {
		t.Errorf("a 429 storm counted %v times as reason 429", answered)
	}
	figure(t, "500s for 4s, 429 storm for 6s (Retry-After 2s), slow answers 4s, invalid_auth on one channel: %d posts once each, 0 requests inside a Retry-After window, %d permanent failures with one log line each, rate-limited %v times by Slack, %v by the budget",
		posts, failed, answered, d.metric(t, `watchdogd_slack_rate_limited_total{reason="budget"}`))
}

// TestFaultKandevWebSocket: nudges while kandev's WebSocket refuses
// connections, closes mid-request, and answers errors.
func TestFaultKandevWebSocket(t *testing.T) {
	extra, base := daemonConfig(t, "policy:\n  interrupted_session:\n    steps: [{after: 0s, action: nudge}]\n  shadowed_clarification:\n    steps: [{after: 0s, action: nudge}]\n"+
		"  multiple_open_turns:\n    steps: [{after: 0s, action: nudge}]\n")
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	// kandev is down: base_url points at a closed port for a while.
	deadURL := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	realURL := e.vars["ws"]
	e.vars["ws"] = deadURL
	e.writeConfig()
	d := e.startDaemon(base)
	waitFor(t, 20*time.Second, "retries while refused", func() bool {
		return d.metric(t, `watchdogd_actions_total{action="nudge",result="retried"}`) >= 2
	})
	// kandev is back, but drops the first two requests mid-way, and refuses
	// the RUNNING session with two open turns.
	var n int
	var mu sync.Mutex
	e.ws.SetFail(func(action string) string {
		mu.Lock()
		defer mu.Unlock()
		n++
		if n <= 2 {
			return "close"
		}
		return ""
	})
	e.vars["ws"] = realURL
	e.writeConfig()
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	failedNudges := func() int {
		n := 0
		for _, a := range e.actions() {
			if a.Kind == "nudge" && a.State == "failed" {
				n++
			}
		}
		return n
	}
	// The two promptable sessions get their nudge (after the dropped
	// requests' backoff); the RUNNING one is refused, once.
	waitFor(t, 60*time.Second, "nudges delivered and the refusal recorded", func() bool {
		return len(e.ws.Messages()) >= 2 && failedNudges() == 1
	})
	time.Sleep(3 * time.Second)
	sessions := map[string]int{}
	for _, m := range e.ws.Messages() {
		sessions[m.SessionID]++
	}
	if len(sessions) != 2 || sessions["sess-parked"] != 1 || sessions["sess-shadowed"] != 1 {
		t.Fatalf("kandev messages %v", sessions)
	}
	if n := failedNudges(); n != 1 {
		t.Fatalf("%d failed nudges, want the refused one", n)
	}
	figure(t, "refused connections for 2s, 2 requests dropped mid-way, 1 refusal: 2 nudges delivered once each (%d replays deduplicated by client_message_id), 1 permanent failure", e.ws.Duplicates())
}

// TestFaultSIGKILL: the running daemon (scheduler included) is SIGKILLed
// at random moments, again and again; restarted each time. Exactly one
// message per due step.
func TestFaultSIGKILL(t *testing.T) {
	extra, base := daemonConfig(t, "policy:\n  unanswered_clarification:\n    steps:\n      - {after: 0s, action: slack}\n      - {after: 34m, action: slack, mention: true}\n    repeat_every: 10s\n")
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	e.slack.SetFault(func(string, int) slacktest.Fault { return slacktest.Fault{Delay: 300 * time.Millisecond, Record: true} })
	rng := rand.New(rand.NewPCG(7, 11))
	evidence := 0
	for i := 0; i < *kills; i++ {
		d := e.startDaemon(base)
		time.Sleep(time.Duration(100+rng.IntN(1400)) * time.Millisecond)
		_ = d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.done
		d.done <- nil
		evidence += len(logLines(d.out.String(), "settled from evidence"))
	}
	e.slack.SetFault(nil)
	// Run until quiet: stale claims pass claim_ttl and are settled.
	d := e.startDaemon(base)
	time.Sleep(6 * time.Second)
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	<-d.done
	d.done <- nil
	evidence += len(logLines(d.out.String(), "settled from evidence"))
	posts := e.exactlyOnce()
	replies := 0
	for _, m := range e.slack.Messages() {
		if m.ThreadTS != "" {
			replies++
		}
	}
	if evidence == 0 || replies == 0 {
		t.Fatalf("evidence settlements %d, replies %d: the kills missed the window between post and record", evidence, replies)
	}
	figure(t, "%d SIGKILLs of the running daemon: %d posts (%d thread replies), each once; %d deliveries settled from Slack's history", *kills, posts, replies, evidence)
}

// TestFaultHostileData: a 10 MB question prompt, a 1 MB title and 1 MB
// options, titles and questions with Slack markup, <!channel>, HTML and
// quotes, ids with quotes and semicolons: the scan completes on both
// dialects, the Slack text is escaped, what the agent wrote is cut and
// says so in Slack and in the ledger, kandev's tables are intact.
func TestFaultHostileData(t *testing.T) {
	now := time.Now()
	b := kandevdb.NewBuilder(now)
	evil := `<!channel> *bold* <script>alert("x")</script> "quotes" 'single' & <https://evil.example|click>`
	s := b.Session(`sess'; DROP TABLE tasks;--`, evil+" "+strings.Repeat("t", 1<<20), `ws"; DELETE FROM task_sessions;--`, "WAITING_FOR_INPUT", time.Hour, "")
	tb := s.Turn(`turn"'; --`, 50*time.Minute, -1, "")
	opts := []kandevdb.QuestionOpt{{ID: "a", Label: evil + strings.Repeat("l", 1<<20), Description: evil + strings.Repeat("d", 1<<20)}}
	for i := range 200 {
		opts = append(opts, kandevdb.QuestionOpt{ID: fmt.Sprint(i), Label: evil, Description: evil})
	}
	tb.Clarification(`p'";--`, `q<!here>`, evil, evil+" "+strings.Repeat("long ", 2<<20), opts, "", 30*time.Minute, nil)
	ctx := context.Background()
	_, dsn := pgDatabase(t, "hostile")
	pgdb, err := kandevdb.CreatePostgres(ctx, dsn, kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := pgdb.Write(ctx, b.DS); err != nil {
		t.Fatal(err)
	}
	_ = pgdb.Close()
	for _, dialect := range []string{"sqlite", "postgres"} {
		e := newEnv(t, b.DS, "sqlite", "")
		env := []string{}
		if dialect == "postgres" {
			env = append(env, "WATCHDOGD_DATABASE_URL="+dsn)
		}
		r := watchdogd(t, append(e.environ(), env...), "run", "--once", "--config", e.cfg)
		if r.code != 0 {
			t.Fatalf("%s: run --once: %s", dialect, r.stderr)
		}
		msgs := e.slack.Messages()
		if len(msgs) != 1 {
			t.Fatalf("%s: %d messages", dialect, len(msgs))
		}
		for _, blk := range msgs[0].Blocks {
			if txt, ok := blk["text"].(map[string]any); ok && txt["type"] == "mrkdwn" {
				body := txt["text"].(string)
				for _, bad := range []string{"<!channel>", "<!here>", "<script>", "<https://evil"} {
					if strings.Contains(body, bad) {
						t.Fatalf("%s: mrkdwn carries %q unescaped: %q", dialect, bad, body)
					}
				}
			}
		}
		if strings.Contains(msgs[0].Text, "<!channel>") {
			t.Fatalf("%s: fallback text pings @channel", dialect)
		}
		// The options were cut and say so, in Slack and in the ledger's
		// frozen message; nothing the agent wrote is kept whole.
		if blocks, _ := json.Marshal(msgs[0].Blocks); !strings.Contains(string(blocks), "… cut") {
			t.Errorf("%s: the Slack post does not say what was cut", dialect)
		}
		for _, a := range e.actions() {
			if !strings.Contains(a.Body, "… cut") || len(a.Body) > 64<<10 {
				t.Errorf("%s: the ledger's %s body is %d bytes, cut marked %v", dialect, a.Kind, len(a.Body), strings.Contains(a.Body, "… cut"))
			}
		}
	}
	// kandev's tables are intact (no statement was built from data).
	check, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = check.Close() }()
	var tasks, sessions int
	if err := check.QueryRow("SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM task_sessions)").Scan(&tasks, &sessions); err != nil || tasks != 1 || sessions != 1 {
		t.Fatalf("kandev's tables: %d tasks, %d sessions, %v", tasks, sessions, err)
	}
	figure(t, "a 10 MB prompt, a 1 MB title and 1 MB options, markup/HTML/quotes in titles and questions, SQL in ids: scanned on both dialects, one escaped post each, cut and marked, tables intact")
}

// TestFaultSecretsNeverLeak: with tokens and a database password
// configured, no log line, error, API response, status page or
// check-config output contains them.
func TestFaultSecretsNeverLeak(t *testing.T) {
	extra, base := daemonConfig(t, "")
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	e.slack.SetFault(func(method string, n int) slacktest.Fault {
		if n%3 == 0 {
			return slacktest.Fault{SlackError: "invalid_auth"}
		}
		return slacktest.Fault{}
	})
	d := e.startDaemon(base)
	waitFor(t, 20*time.Second, "posts", func() bool { return len(e.slack.Messages()) >= 3 })
	d.waitView(t)
	outs := []string{}
	for _, p := range []string{"/", "/api/v1/findings", "/metrics", "/readyz"} {
		_, body := d.get(p)
		outs = append(outs, body)
	}
	const password = "hunter2-do-not-log"
	// A config file that puts the password into kandev's URL (refused), as
	// check-config and POST /-/reload answer it.
	writeConfigText(t, e, strings.Replace(baseConfig, "base_url: {{.ws}}", `base_url: "ftp://bot:`+password+`@kandev"`, 1))
	code, body := d.send(http.MethodPost, "/-/reload")
	if code != http.StatusInternalServerError || !strings.Contains(body, "kandev.base_url: must not carry credentials") {
		t.Fatalf("reload of a URL with credentials: %d %q", code, body)
	}
	r := watchdogd(t, e.environ(), "check-config", e.cfg)
	outs = append(outs, body, r.stdout, r.stderr)
	writeConfigText(t, e, baseConfig)
	// A database URL with a password, from the environment, that fails.
	dead := "postgres://watchdogd:" + password + "@127.0.0.1:1/kandev?connect_timeout=1"
	for _, args := range [][]string{
		{"scan", "--config", e.cfg, "--database-url", dead},
		{"run", "--once", "--config", e.cfg, "--database-url", dead},
		{"check-config", e.cfg},
	} {
		r := watchdogd(t, e.environ(), args...)
		outs = append(outs, r.stdout, r.stderr)
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	<-d.done
	d.done <- nil
	outs = append(outs, d.out.String())
	// The daemon names the database it reads at start, redacted, and keeps
	// the password out of its failing cycles' errors.
	d = e.startDaemon(base, "WATCHDOGD_DATABASE_URL="+dead)
	waitFor(t, 20*time.Second, "a failed cycle", func() bool { return strings.Contains(d.out.String(), "cycle failed") })
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	<-d.done
	d.done <- nil
	if !strings.Contains(d.out.String(), `"database":"postgres://watchdogd:xxxxx@127.0.0.1:1/kandev`) {
		t.Errorf("the start line does not name the redacted database:\n%.2000s", d.out.String())
	}
	outs = append(outs, d.out.String())
	for _, o := range outs {
		for _, secret := range []string{slackToken, kandevToken, password} {
			if strings.Contains(o, secret) {
				t.Fatalf("%q leaked:\n%.2000s", secret, o)
			}
		}
	}
	figure(t, "Slack token, kandev token and a database password: absent from %d outputs (logs, errors, status page, API, metrics, reload, check-config)", len(outs))
}
