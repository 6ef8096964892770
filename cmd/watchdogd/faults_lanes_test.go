//go:build faults

package main

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
	"github.com/watchdogd/watchdogd/internal/notify/webhook/webhooktest"
)

// lanesWorld is kandev with interrupted sessions in ws-hook, stalled
// turns in ws-stall and questions spread over the three workspaces the
// test config routes to Slack channels (ws-web, ws-ops, ws-docs).
func lanesWorld(now time.Time, interrupted, stalls, questions int) kandevdb.Dataset {
	b := kandevdb.NewBuilder(now)
	m := time.Minute
	for i := range interrupted {
		id := fmt.Sprintf("sess-int-%02d", i)
		s := b.Session(id, "Interrupted "+id, "ws-hook", "WAITING_FOR_INPUT", 2*time.Hour, fmt.Sprintf(`{"interrupted_at": %q}`, now.Add(-25*m).UTC().Format(time.RFC3339)))
		s.Turn("turn-"+id, 60*m, 26*m, "").Agent("message", 27*m)
	}
	for i := range stalls {
		id := fmt.Sprintf("sess-stall-%02d", i)
		s := b.Session(id, "Stalled "+id, "ws-stall", "RUNNING", time.Hour, "")
		s.Turn("turn-"+id, 40*m, -1, "").Agent("tool_call", 30*m)
	}
	for i := range questions {
		id := fmt.Sprintf("sess-q-%02d", i)
		s := b.Session(id, "Question "+id, []string{"ws-web", "ws-ops", "ws-docs"}[i%3], "WAITING_FOR_INPUT", time.Hour, "")
		s.Turn("turn-"+id, 40*m, -1, "").Clarification("p-"+id, "q1", "Which?", "Which one?", nil, "pending", 20*m, nil)
	}
	return b.DS
}

// hooksConfig is two webhooks, "hung" and "ok", each with timeout, signing
// with hookSecret, then more.
func hooksConfig(t *testing.T, hung, ok, timeout, more string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "hook")
	if err := os.WriteFile(file, []byte(hookSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return "webhooks:\n  - {name: hung, url: " + hung + ", secret_file: " + file + ", timeout: " + timeout + "}\n" +
		"  - {name: ok, url: " + ok + ", secret_file: " + file + ", timeout: " + timeout + "}\n" + more
}

// keysOf is the keys a receiver got, each once.
func keysOf(r *webhooktest.Receiver) map[string]bool {
	keys := map[string]bool{}
	for _, d := range r.Deliveries() {
		if _, k := d.Event(); d.Status == http.StatusOK {
			keys[k] = true
		}
	}
	return keys
}

// cycles is how many cycles a daemon has finished.
func (d *daemonProc) cycles() int { return len(logLines(d.out.String(), "cycle finished")) }

// TestFaultLanesHungWebhook: a webhook that accepts and never answers
// (each attempt waits its 10 s timeout) gets 34 interrupted sessions and
// 20 stalled turns; a healthy webhook the same 20 stalled turns; Slack 13
// questions in three channels. In the first cycle every Slack question is
// posted and the healthy webhook receives all 20; the hung webhook is
// tried once, its lane reported down (watchdogd_lane_up 0) by the end of
// that cycle, and once the receiver answers, its lane comes back by
// itself and every episode owed to it arrives.
func TestFaultLanesHungWebhook(t *testing.T) {
	hung, ok := webhooktest.Start(t, hookSecret), webhooktest.Start(t, hookSecret)
	hung.Answer(func(int, webhooktest.Delivery) webhooktest.Answer { return webhooktest.Answer{Hang: true} })
	extra, base := daemonConfig(t, hooksConfig(t, hung.URL, ok.URL, "10s", `policy:
  interrupted_session:
    steps: [{after: 0s, action: webhook, webhook: hung}]
  stalled_turn:
    steps: [{after: 0s, action: webhook, webhook: hung}, {after: 0s, action: webhook, webhook: ok}]
  unanswered_clarification:
    steps: [{after: 0s, action: slack}]
`))
	e := newEnv(t, lanesWorld(time.Now(), 34, 20, 13), "sqlite", extra)
	writeConfigText(t, e, strings.Replace(baseConfig, "claim_ttl: 2s", "claim_ttl: 15s", 1)) // an attempt may take the hook's 10s
	d := e.startDaemon(base)
	waitFor(t, 60*time.Second, "the first cycle's end", func() bool { return d.cycles() >= 1 })
	posts := e.slack.Messages()
	if len(posts) != 13 {
		t.Fatalf("%d Slack posts in the first cycle, want every one of the 13 questions", len(posts))
	}
	if n := len(keysOf(ok)); n != 20 {
		t.Fatalf("the healthy webhook received %d in the first cycle, want 20", n)
	}
	if n := len(hung.Deliveries()); n != 1 {
		t.Errorf("the hung webhook was tried %d times in the first cycle, want once: its lane holds the rest", n)
	}
	began := hung.Deliveries()[0].At // delivery began right after the scan
	last := began
	for _, p := range posts {
		if p.At.After(last) {
			last = p.At
		}
	}
	if up := d.metric(t, `watchdogd_lane_up{destination="hung",outlet="webhook"}`); up != 0 {
		t.Errorf("lane_up of the hung webhook %v after the first cycle, want 0", up)
	}
	if up := d.metric(t, `watchdogd_lane_up{destination="ok",outlet="webhook"}`); up != 1 {
		t.Errorf("lane_up of the healthy webhook %v, want 1", up)
	}
	waitFor(t, 10*time.Second, "the status page showing the hung webhook down", func() bool { // published right after the cycle's last line
		code, page := d.get("/")
		return code == 200 && strings.Contains(page, "down") && strings.Contains(page, "hung")
	})
	if len(logLines(d.out.String(), "lane down")) != 1 {
		t.Errorf("lane down logged %d times, want once", len(logLines(d.out.String(), "lane down")))
	}
	firstCycle := d.cycles()

	hung.Answer(nil)
	waitFor(t, 60*time.Second, "every episode owed to the hung webhook", func() bool { return len(keysOf(hung)) == 54 })
	waitFor(t, 10*time.Second, "its lane up", func() bool { return d.metric(t, `watchdogd_lane_up{destination="hung",outlet="webhook"}`) == 1 })
	if n := len(logLines(d.out.String(), "lane up")); n != 1 {
		t.Errorf("lane up logged %d times, want once", n)
	}
	d.terminate(t)
	for _, a := range e.actions() {
		if a.State == model.StateFailed {
			t.Errorf("action %s (%s to %s) failed: %s", a.Key, a.Kind, a.Channel, a.Error)
		}
	}
	figure(t, "a webhook that never answers (10s timeout, 54 episodes) beside a healthy one (20) and Slack (13 questions, 3 channels): "+
		"first cycle: %d/13 Slack posts, the last %.1fs after delivery began; %d/20 at the healthy webhook; 1 attempt at the hung one, its lane down at cycle %d's end; "+
		"once it answered, its lane came back by itself and all 54 arrived", len(posts), last.Sub(began).Seconds(), 20, firstCycle)
}

// TestFaultLanesSlackHung: Slack accepts and never answers (each attempt
// waits the client's 1 s timeout). In the first cycle every Alertmanager
// alert due (40 interrupted sessions, 43 questions) reaches the real
// Alertmanager (member 0), though member 1 never answers either, and
// every nudge due (the 40 sessions) reaches kandev; Slack's lanes
// are down, and its outlet-wide state shows on watchdogd_lane_up.
func TestFaultLanesSlackHung(t *testing.T) {
	am := startAlertmanager(t, 5*time.Minute)
	deaf := hangingListener(t)
	extra, base := daemonConfig(t, `alertmanager:
  urls: [`+am+`, http://`+deaf+`]
  resend_interval: 1m
  timeout: 1s
policy:
  interrupted_session:
    steps: [{after: 0s, action: slack}, {after: 0s, action: alertmanager}, {after: 0s, action: nudge}]
  unanswered_clarification:
    steps: [{after: 0s, action: slack}, {after: 0s, action: alertmanager}]
`)
	const stalls, questions = 40, 43 // stalls: interrupted sessions, nudged
	e := newEnv(t, lanesWorld(time.Now(), stalls, 0, questions), "sqlite", extra)
	e.slack.SetFault(func(string, int) slacktest.Fault { return slacktest.Fault{Delay: 3 * time.Second} }) // past the client's 1s timeout
	d := e.startDaemon(base)
	waitFor(t, 60*time.Second, "the first cycle's end", func() bool { return d.cycles() >= 1 })
	alerts := len(activeAlerts(t, am))
	nudges := len(e.ws.Messages())
	if alerts != stalls+questions || nudges != stalls {
		t.Fatalf("first cycle with Slack hung: %d/%d alerts in Alertmanager, %d/%d nudges", alerts, stalls+questions, nudges, stalls)
	}
	for _, ch := range []string{"C-alerts", "C-ops", "C-docs"} {
		if up := d.metric(t, `watchdogd_lane_up{destination="`+ch+`",outlet="slack"}`); up != 0 {
			t.Errorf("lane_up of Slack channel %s %v, want 0", ch, up)
		}
	}
	if up := d.metric(t, `watchdogd_lane_up{destination="1",outlet="alertmanager"}`); up != 0 {
		t.Errorf("lane_up of the deaf Alertmanager member %v, want 0", up)
	}
	if up := d.metric(t, `watchdogd_lane_up{destination="0",outlet="alertmanager"}`); up != 1 {
		t.Errorf("lane_up of the real Alertmanager %v, want 1", up)
	}
	// Ready while Slack's lanes are down: outlets are no readiness check
	// (a cycle longer than three ticks of this 1 s schedule is stale until
	// the next scan, whatever its outlets do).
	waitFor(t, 10*time.Second, "/readyz 200 while Slack's lanes are down", func() bool {
		code, _ := d.get("/readyz")
		return code == 200 && d.metric(t, `watchdogd_lane_up{destination="C-alerts",outlet="slack"}`) == 0
	})
	figure(t, "Slack hung (1s timeout) and one of two Alertmanager members deaf: first cycle: %d/%d alerts in the real Alertmanager, %d/%d nudges at kandev; "+
		"Slack's 3 lanes and the deaf member down, /readyz 200", alerts, stalls+questions, nudges, stalls)
}

// hangingListener accepts connections and never answers: a receiver
// that hung. It returns its address.
func hangingListener(t *testing.T) string {
	t.Helper()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

// TestFaultLanesSIGKILL: lanes deliver concurrently (Slack's three
// channels, a slow webhook and a fast one, kandev) while the daemon is
// SIGKILLed again and again, on a SQLite and on a PostgreSQL ledger. No
// Slack post twice, every webhook key arrives, repeated only under its
// own key, and every action settles.
func TestFaultLanesSIGKILL(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			slow, fast := webhooktest.Start(t, hookSecret), webhooktest.Start(t, hookSecret)
			slow.Answer(func(int, webhooktest.Delivery) webhooktest.Answer {
				return webhooktest.Answer{Status: http.StatusOK, Delay: 600 * time.Millisecond}
			})
			extra, base := daemonConfig(t, hooksConfig(t, slow.URL, fast.URL, "1s", `policy:
  stalled_turn:
    steps: [{after: 0s, action: slack}, {after: 0s, action: webhook, webhook: hung}, {after: 0s, action: webhook, webhook: ok}]
  interrupted_session:
    steps: [{after: 0s, action: slack}, {after: 0s, action: nudge}]
  unanswered_clarification:
    steps: [{after: 0s, action: slack}, {after: 0s, action: webhook, webhook: ok}]
    repeat_every: 2s
    resolve_hold: 0s
`))
			state := "sqlite"
			if dialect == "postgres" {
				_, state = pgDatabase(t, "ledger")
			}
			e := newEnv(t, lanesWorld(time.Now(), 3, 6, 6), state, extra)
			e.slack.SetFault(func(string, int) slacktest.Fault { return slacktest.Fault{Delay: 300 * time.Millisecond, Record: true} })
			rng := rand.New(rand.NewPCG(5, 8))
			runs, evidence := max(*kills/2, 20), 0
			for i := range runs {
				if i == runs/2 { // half way, the questions are answered: resolves go out under the kills too
					if _, err := e.kandev.DB().Exec(`UPDATE task_session_messages SET metadata = json_set(metadata, '$.status', 'answered') WHERE type = 'clarification_request'`); err != nil {
						t.Fatal(err)
					}
				}
				d := e.startDaemon(base)
				time.Sleep(time.Duration(300+rng.IntN(1400)) * time.Millisecond)
				_ = d.cmd.Process.Signal(syscall.SIGKILL)
				<-d.done
				d.done <- nil
				evidence += len(logLines(d.out.String(), "settled from evidence"))
			}
			e.slack.SetFault(nil)
			slow.Answer(nil)
			d := e.startDaemon(base)
			time.Sleep(6 * time.Second) // past claim_ttl: stale claims are taken over and settled
			d.terminate(t)
			posts := e.exactlyOnce() // every Slack post once, every action settled
			got := map[string]int{}
			for _, r := range []*webhooktest.Receiver{slow, fast} {
				for _, dl := range r.Deliveries() {
					ev, key := dl.Event()
					if !dl.Verified || dl.ID != key || dl.IdempotencyKey != key || ev == "" {
						t.Errorf("delivery id %q idempotency key %q body key %q verified %v", dl.ID, dl.IdempotencyKey, key, dl.Verified)
					}
					got[key]++
				}
			}
			hooks, repeats := 0, 0
			for _, a := range e.actions() {
				if a.Kind != model.ActionWebhook || a.State != model.StateDelivered {
					continue
				}
				if got[a.Key] == 0 {
					t.Errorf("webhook action %s (%s to %s) delivered but never received", a.Key, a.Seq, a.Channel)
				}
				hooks++
				repeats += got[a.Key] - 1
				delete(got, a.Key)
			}
			for k := range got {
				t.Errorf("a webhook received key %s, which no delivered action has", k)
			}
			evidence += len(logLines(d.out.String(), "settled from evidence"))
			if evidence+repeats == 0 {
				t.Errorf("no post settled from Slack's history and no webhook sent twice: the kills missed every window between send and settle")
			}
			figure(t, "%d SIGKILLs, lanes concurrent (3 Slack channels, 2 webhooks, kandev), %s ledger: %d Slack posts each once (%d settled from Slack's history), %d webhook keys all received (%d repeats, each under its own key), every action settled",
				runs, dialect, posts, evidence, hooks, repeats)
		})
	}
}
