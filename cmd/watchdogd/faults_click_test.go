//go:build faults

package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/interact"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
)

var clickKills = flag.Int("click-kills", 20, "how many times the daemon is SIGKILLed while it delivers a click from Slack")

// postUntilTaken sends a click to the HTTP endpoint until it answers 200,
// as Slack retries a request that failed: the daemon may be starting (the
// listener not up, the ledger not open yet).
func postUntilTaken(t *testing.T, listen string, payload []byte) {
	t.Helper()
	body := "payload=" + url.QueryEscape(string(payload))
	waitFor(t, 30*time.Second, "the click taken", func() bool {
		req, _ := http.NewRequest(http.MethodPost, "http://"+listen+interact.Path, strings.NewReader(body))
		req.Header = interact.Sign(config.Secret(signingSecret), []byte(body), time.Now())
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// TestFaultClickSIGKILL: a click in Slack per question, each followed by a
// SIGKILL of the daemon at a random moment while kandev's answer and
// Slack's edit are slow (so that kills land between claim and settle),
// the daemon restarted each time and the click sent again as Slack
// retries. Every question is answered in kandev exactly once, with the
// option clicked, and every message edited exactly once.
func TestFaultClickSIGKILL(t *testing.T) {
	var ids []string
	for i := 0; i < *clickKills; i++ {
		ids = append(ids, fmt.Sprint(i))
	}
	listen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	e, d := interactiveEnvOf(t, "    mode: http\n    listen: "+listen+"\n    signing_secret_file: {{.dir}}/signing\n", "", ids)
	base := d.base
	posts := firstPosts(e.slack)
	e.ws.SetRespondFault(func(int) string { return "slow" })
	e.slack.SetFault(func(method string, _ int) slacktest.Fault {
		if method == "chat.update" {
			return slacktest.Fault{Delay: 300 * time.Millisecond, Record: true}
		}
		return slacktest.Fault{}
	})
	rng := rand.New(rand.NewPCG(47, 20))
	evidence := 0
	for i, id := range ids {
		if i > 0 {
			d = e.startDaemon(base)
		}
		postUntilTaken(t, listen, click(t, posts["sess-"+id], "U0ALICE", "pgx"))
		time.Sleep(time.Duration(rng.IntN(900)) * time.Millisecond)
		_ = d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.done
		d.done <- nil
		evidence += len(logLines(d.out.String(), "settled from evidence"))
	}
	e.ws.SetRespondFault(nil)
	e.slack.SetFault(nil)
	d = e.startDaemon(base)
	edited := func() int {
		n := 0
		for _, id := range ids {
			for _, m := range e.slack.Messages() {
				if m.TS == posts["sess-"+id].TS && m.Edits > 0 {
					n++
				}
			}
		}
		return n
	}
	waitFor(t, 60*time.Second, "every message edited", func() bool { return edited() == len(ids) })
	time.Sleep(4 * time.Second) // stale claims pass claim_ttl; nothing more goes out
	d.terminate(t)
	evidence += len(logLines(d.out.String(), "settled from evidence"))

	// watchdogd's own part of "once": no respond after the ledger recorded
	// the answer delivered (kandev's first-answer-wins would hide one).
	settled := map[string]time.Time{}
	for _, a := range e.actions() {
		if b, err := model.DecodeClick(a.Body); err == nil && a.Kind == model.ActionAnswer && a.State == model.StateDelivered {
			settled[b.PendingID] = a.UpdatedAt
		}
	}
	claimed, requests := map[string]int{}, 0
	for _, r := range e.ws.Responds() {
		requests++
		if r.Claimed {
			claimed[r.PendingID]++
		}
		if len(r.Answers) != 1 || r.Answers[0].Options[0] != "pgx" {
			t.Fatalf("kandev got another answer: %+v", r)
		}
		if at, ok := settled[r.PendingID]; !ok || r.At.After(at) {
			t.Fatalf("a respond for %s at %s, after its answer was settled (%v, %s) in the ledger", r.PendingID, r.At, ok, at)
		}
	}
	for _, id := range ids {
		if claimed["p-"+id] != 1 {
			t.Fatalf("question %s answered %d times in kandev", id, claimed["p-"+id])
		}
	}
	for _, m := range e.slack.Messages() {
		if m.Edits > 1 {
			t.Fatalf("message %s edited %d times", m.TS, m.Edits)
		}
	}
	if requests == len(ids) && evidence == 0 {
		t.Fatal("no kill landed between an answer or an edit and its settlement")
	}
	figure(t, "%d SIGKILLs while clicks were delivered: %d questions answered once each (%d respond requests; repeats answered with our own answer), %d messages edited once each; %d edits settled from Slack's history",
		len(ids), len(claimed), requests, edited(), evidence)
}
