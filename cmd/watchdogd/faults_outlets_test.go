//go:build faults

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/webhook/webhooktest"
)

var alertmanagerBin = flag.String("alertmanager", "../../bin/alertmanager", "a real Alertmanager binary (make bin/alertmanager)")

// startAlertmanager runs the real Alertmanager on a loopback port with
// resolveTimeout, clustering off, and returns its base URL.
func startAlertmanager(t *testing.T, resolveTimeout time.Duration) string {
	t.Helper()
	return startAlertmanagerWith(t, fmt.Sprintf("global:\n  resolve_timeout: %s\nroute:\n  receiver: blackhole\n  group_wait: 1s\nreceivers:\n  - name: blackhole\n", resolveTimeout))
}

// startAlertmanagerWith runs the real Alertmanager with config cfg.
func startAlertmanagerWith(t *testing.T, cfg string) string {
	t.Helper()
	bin, err := filepath.Abs(*alertmanagerBin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no Alertmanager binary (build it with make %s): %v", "bin/alertmanager", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "am.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "am.yml"), "--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+strings.TrimPrefix(base, "http://"), "--cluster.listen-address=")
	out := newSyncBuffer()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("alertmanager output:\n%s", out.String())
		}
	})
	waitFor(t, 30*time.Second, "Alertmanager ready", func() bool {
		resp, err := http.Get(base + "/-/ready")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return base
}

// amAlert is an alert as Alertmanager's GET /api/v2/alerts returns it.
type amAlert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Status       struct{ State string }
}

// activeAlerts reads back what Alertmanager holds: only alerts not yet
// ended, by alertname and session.
func activeAlerts(t *testing.T, base string) map[string]amAlert {
	t.Helper()
	resp, err := http.Get(base + "/api/v2/alerts")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	var alerts []amAlert
	if err := json.Unmarshal(body, &alerts); err != nil {
		t.Fatalf("GET /api/v2/alerts: %v: %s", err, body)
	}
	out := map[string]amAlert{}
	for _, a := range alerts {
		out[a.Labels["alertname"]+"/"+a.Labels["session_id"]] = a
	}
	return out
}

// stayActive polls Alertmanager for a while: every poll must find each
// of the alerts named.
func stayActive(t *testing.T, am string, d time.Duration, while string, names ...string) {
	t.Helper()
	for until := time.Now().Add(d); time.Now().Before(until); time.Sleep(500 * time.Millisecond) {
		a := activeAlerts(t, am)
		for _, n := range names {
			if a[n].Labels == nil {
				t.Fatalf("alert %s ended %s: %v", n, while, a)
			}
		}
	}
}

// hookSecret is the test webhook's signing secret.
const hookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// hookConfig is the config of one webhook "hook" at url, signing with
// secret, then more.
func hookConfig(t *testing.T, url, secret, more string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "hook")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return "webhooks:\n  - {name: hook, url: " + url + ", secret_file: " + file + ", timeout: 1s}\n" + more
}

// TestFaultAlertmanager: against a real Alertmanager whose resolve_timeout
// is 3 s, every finding whose policy names Alertmanager is an alert with
// its labels and annotations; the alerts stay active across several
// resolve_timeouts while the findings hold (watchdogd re-sends them), also
// while scans fail, and the one whose question is answered ends within a
// few cycles.
func TestFaultAlertmanager(t *testing.T) {
	am := startAlertmanager(t, 3*time.Second)
	extra, base := daemonConfig(t, `alertmanager:
  urls: [`+am+`]
  resend_interval: 1s
  timeout: 1s
  labels: {team: agents}
  severity: {unanswered_clarification: info}
  runbook_url: https://runbooks.example.com/kandev
policy:
  stalled_turn:
    steps: [{after: 0s, action: alertmanager}]
  unanswered_clarification:
    steps: [{after: 0s, action: alertmanager}]
`)
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	d := e.startDaemon(base)
	const stalled, question = "KandevStalledTurn/sess-stalled", "KandevUnansweredClarification/sess-question"
	waitFor(t, 30*time.Second, "both alerts in Alertmanager", func() bool {
		a := activeAlerts(t, am)
		return a[stalled].Labels != nil && a[question].Labels != nil
	})
	eps := map[string]model.Episode{}
	for _, ep := range e.episodes() {
		eps[ep.SessionID+"/"+string(ep.Kind)] = ep
	}
	got := activeAlerts(t, am)
	for name, kind := range map[string]model.Kind{stalled: model.KindStalledTurn, question: model.KindUnansweredClarification} {
		a, ep := got[name], eps[got[name].Labels["session_id"]+"/"+string(kind)]
		severity := map[model.Kind]string{model.KindStalledTurn: "warning", model.KindUnansweredClarification: "info"}[kind]
		l, an := a.Labels, a.Annotations
		switch {
		case ep.ID == "" || l["episode_id"] != ep.ID || l["kind"] != string(kind) || l["task_id"] != ep.TaskID || l["workspace_id"] != ep.WorkspaceID:
			t.Errorf("%s: labels %v, want those of episode %+v", name, l, ep)
		case l["severity"] != severity || l["team"] != "agents":
			t.Errorf("%s: severity %q team %q", name, l["severity"], l["team"])
		case !a.StartsAt.Equal(ep.Since.Truncate(time.Millisecond)): // Alertmanager keeps milliseconds
			t.Errorf("%s: startsAt %s, want the finding's since %s", name, a.StartsAt, ep.Since)
		case an["summary"] == "" || an["description"] == "" || !strings.Contains(an["kandev_url"], ep.TaskID) ||
			an["runbook_url"] != "https://runbooks.example.com/kandev" || a.GeneratorURL != an["kandev_url"]:
			t.Errorf("%s: annotations %v generatorURL %q", name, an, a.GeneratorURL)
		case a.Status.State != "active":
			t.Errorf("%s: state %q", name, a.Status.State)
		}
	}

	// Four resolve_timeouts: every poll still finds both.
	stayActive(t, am, 12*time.Second, "while its finding held", stalled, question)
	if n := d.metric(t, `watchdogd_alertmanager_resends_total{result="success"}`); n < 8 {
		t.Errorf("%v resends in 12s of a 1s resend_interval", n)
	}

	// A blind watchdog does not resolve what it cannot see: with kandev's
	// sessions unreadable, scans fail and the alerts stay active.
	if _, err := e.kandev.DB().Exec(`ALTER TABLE task_sessions RENAME TO task_sessions_away`); err != nil {
		t.Fatal(err)
	}
	stayActive(t, am, 8*time.Second, "while scans failed", stalled, question)
	if n := d.metric(t, `watchdogd_scans_total{result="error"}`); n < 4 {
		t.Errorf("%v failed scans in 8s with kandev's sessions gone", n)
	}
	if _, err := e.kandev.DB().Exec(`ALTER TABLE task_sessions_away RENAME TO task_sessions`); err != nil {
		t.Fatal(err)
	}

	if _, err := e.kandev.DB().Exec(`UPDATE task_session_messages SET metadata = json_set(metadata, '$.status', 'answered') WHERE type = 'clarification_request'`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the answered question's alert to end", func() bool { return activeAlerts(t, am)[question].Labels == nil })
	if activeAlerts(t, am)[stalled].Labels == nil {
		t.Error("the stalled turn's alert ended with the question's")
	}
	figure(t, "a real Alertmanager (resolve_timeout 3s): 2 alerts kept active for 12s by resends and 8s more of failing scans, the answered one ended within 10s")
}

// TestFaultWebhookSIGKILL: the daemon is SIGKILLed again and again while
// a slow webhook receiver is answering. Every due step and every resolve
// arrives, signed (the receiver verifies with the Standard Webhooks library); none is lost;
// a delivery cut by a kill is sent again with the same key.
func TestFaultWebhookSIGKILL(t *testing.T) {
	rcv := webhooktest.Start(t, hookSecret)
	rcv.Answer(func(int, webhooktest.Delivery) webhooktest.Answer {
		return webhooktest.Answer{Status: http.StatusOK, Delay: 600 * time.Millisecond}
	})
	extra, base := daemonConfig(t, hookConfig(t, rcv.URL, hookSecret, `policy:
  stalled_turn:
    steps: [{after: 0s, action: webhook}]
  unanswered_clarification:
    steps: [{after: 0s, action: webhook}]
    repeat_every: 2s
    resolve_hold: 0s
`))
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	rng := rand.New(rand.NewPCG(3, 5))
	runs := max(*kills, 20)
	for i := 0; i < runs; i++ {
		if i == runs/2 { // half way, the questions are answered: resolves go out under the kills too
			if _, err := e.kandev.DB().Exec(`UPDATE task_session_messages SET metadata = json_set(metadata, '$.status', 'answered') WHERE type = 'clarification_request'`); err != nil {
				t.Fatal(err)
			}
		}
		d := e.startDaemon(base)
		time.Sleep(time.Duration(200+rng.IntN(1300)) * time.Millisecond)
		_ = d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.done
		d.done <- nil
	}
	rcv.Answer(nil)
	d := e.startDaemon(base)
	time.Sleep(6 * time.Second) // past claim_ttl: stale claims are sent again
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	<-d.done
	d.done <- nil

	byKey := map[string]int{}
	events := map[string]int{}
	for _, dl := range rcv.Deliveries() {
		event, key := dl.Event()
		if !dl.Verified || dl.ID != key || dl.IdempotencyKey != key {
			t.Errorf("delivery id %q idempotency key %q body key %q verified %v (%s)", dl.ID, dl.IdempotencyKey, key, dl.Verified, dl.Why)
		}
		byKey[key]++
		if byKey[key] == 1 {
			events[event]++
		}
	}
	duplicates := 0
	webhooks := 0
	for _, a := range e.actions() {
		if a.Kind != model.ActionWebhook {
			continue
		}
		switch {
		case a.State == model.StateSuperseded && byKey[a.Key] == 0: // its episode resolved before it went
			continue
		case a.State != model.StateDelivered:
			t.Errorf("webhook action %s (%s) is %s: %s", a.Key, a.Seq, a.State, a.Error)
		case byKey[a.Key] == 0:
			t.Errorf("webhook action %s (%s) never reached the receiver", a.Key, a.Seq)
		}
		webhooks++
		duplicates += byKey[a.Key] - 1
		delete(byKey, a.Key)
	}
	for k := range byKey {
		t.Errorf("the receiver got key %s, which the ledger never decided", k)
	}
	if events["step"] == 0 || events["resolved"] == 0 {
		t.Errorf("events %v: want steps and resolves", events)
	}
	if duplicates == 0 {
		t.Errorf("no delivery was sent twice: the kills missed the window between send and settle")
	}
	figure(t, "%d SIGKILLs with a webhook receiver answering in 600ms: %d keys (%d steps, %d resolves) all arrived signed; %d re-sends after kills, each with its key",
		runs, webhooks, events["step"], events["resolved"], duplicates)
}

// TestFaultWebhookRetryAfter: a receiver's 429 with Retry-After: 3 is
// waited out by the running daemon, which sends again after it (and not
// before), then delivers.
func TestFaultWebhookRetryAfter(t *testing.T) {
	rcv := webhooktest.Start(t, hookSecret)
	rcv.Answer(func(n int, _ webhooktest.Delivery) webhooktest.Answer {
		if n == 1 {
			return webhooktest.Answer{Status: http.StatusTooManyRequests, RetryAfter: "3"}
		}
		return webhooktest.Answer{Status: http.StatusOK}
	})
	extra, base := daemonConfig(t, hookConfig(t, rcv.URL, hookSecret, `policy:
  stalled_turn:
    steps: [{after: 0s, action: webhook}]
`))
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	d := e.startDaemon(base)
	waitFor(t, 30*time.Second, "a delivery after the 429", func() bool {
		for _, dl := range rcv.Deliveries() {
			if dl.Status == http.StatusOK {
				return true
			}
		}
		return false
	})
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	dl := rcv.Deliveries()
	if dl[0].Status != http.StatusTooManyRequests {
		t.Fatalf("first delivery answered %d", dl[0].Status)
	}
	_, first := dl[0].Event()
	delivered := false
	for _, later := range dl[1:] {
		if wait := later.At.Sub(dl[0].At); wait < 3*time.Second {
			t.Errorf("sent to the receiver %s after its 429 with Retry-After: 3", wait)
		}
		if _, key := later.Event(); key == first && later.Status == http.StatusOK {
			delivered = true
		}
	}
	if !delivered {
		t.Errorf("the delivery refused with 429 (key %s) was not sent again with its key", first)
	}
}
