package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
	"github.com/watchdogd/watchdogd/internal/testport"
)

// daemonProc is a running `watchdogd run`.
type daemonProc struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	base string
	done chan error
}

type syncBuffer struct {
	mu chan struct{}
	b  bytes.Buffer
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{mu: make(chan struct{}, 1)} }

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu <- struct{}{}
	defer func() { <-s.mu }()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu <- struct{}{}
	defer func() { <-s.mu }()
	return s.b.String()
}

func freePort(t *testing.T) int {
	port, err := testport.Free()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// daemonConfig is the extra config of a daemon test: a fast schedule and a
// free port.
func daemonConfig(t *testing.T, more string) (string, string) {
	port := freePort(t)
	return fmt.Sprintf("schedule: \"@every 1s\"\nhttp:\n  listen: 127.0.0.1:%d\n%s", port, more), fmt.Sprintf("http://127.0.0.1:%d", port)
}

// startDaemon runs `watchdogd run` on the env's config, with extra
// environment variables if given, and kills it when the test ends.
func (e *env) startDaemon(base string, env ...string) *daemonProc {
	e.t.Helper()
	cmd := exec.Command(binary, "run", "--config", e.cfg)
	cmd.Env = append(append(os.Environ(), e.environ()...), env...)
	cmd.Dir = e.dir // a relative path a config names (the default state.url) lands here
	out := newSyncBuffer()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	d := &daemonProc{cmd: cmd, out: out, base: base, done: make(chan error, 1)}
	go func() { d.done <- cmd.Wait() }()
	e.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-d.done
		checkRaces(e.t, out.String())
		if e.t.Failed() {
			e.t.Logf("daemon output:\n%s", out.String())
		}
	})
	return d
}

// get fetches path from the daemon.
func (d *daemonProc) get(path string) (int, string) { return d.send(http.MethodGet, path) }

// waitView waits for the status page and API, which the daemon builds
// once the first cycle's plan is saved and at the end of each cycle:
// /readyz turns ready as soon as the first scan succeeds, before the
// first view is out.
func (d *daemonProc) waitView(t *testing.T) {
	t.Helper()
	waitFor(t, 20*time.Second, "the first cycle's view", func() bool { code, _ := d.get("/api/v1/findings"); return code == 200 })
}

// send makes a bodiless request with any method; the timeout turns a wedged
// handler into a test failure instead of a hung run.
func (d *daemonProc) send(method, path string) (int, string) {
	req, err := http.NewRequest(method, d.base+path, nil)
	if err != nil {
		return 0, err.Error()
	}
	client := http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// terminate sends SIGTERM and wants a clean exit within 10s.
func (d *daemonProc) terminate(t *testing.T) {
	t.Helper()
	start := time.Now()
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		d.done <- err
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit within 10s of SIGTERM")
	}
	t.Logf("exited %s after SIGTERM", time.Since(start).Round(time.Millisecond))
}

// waitFor polls until ok or the deadline.
func waitFor(t *testing.T, within time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (d *daemonProc) metric(t *testing.T, name string) float64 {
	_, body := d.get("/metrics")
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` ([0-9.e+-]+)$`).FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	var v float64
	fmt.Sscan(m[1], &v)
	return v
}

// allMetrics are every metric watchdogd exports.
var allMetrics = []string{
	"watchdogd_build_info", "watchdogd_scans_total", "watchdogd_scan_duration_seconds", "watchdogd_last_successful_scan_timestamp_seconds",
	"watchdogd_sessions_scanned", "watchdogd_findings", "watchdogd_oldest_finding_age_seconds", "watchdogd_episodes_open",
	"watchdogd_actions_total", "watchdogd_action_delivery_seconds", "watchdogd_slack_rate_limited_total", "watchdogd_malformed_metadata_rows",
	"watchdogd_leader", "watchdogd_config_last_reload_successful", "watchdogd_config_last_reload_success_timestamp_seconds",
	"watchdogd_last_successful_cycle_timestamp_seconds", "watchdogd_unparseable_timestamps", "watchdogd_alertmanager_resends_total", "watchdogd_slack_interactions_total",
	"watchdogd_slack_requests_shed_total",
	"watchdogd_destinations_closed", "watchdogd_closed_destination_actions_total",
	"watchdogd_episode_duration_seconds", "watchdogd_episodes_opened_total",
}

// TestDaemon: started against a kandev-shaped database, the binary answers
// /readyz after its first cycle, lists every metric, shows the open findings
// on / and /api/v1/findings, and exits 0 within 10s of SIGTERM sent during
// a cycle.
func TestDaemon(t *testing.T) {
	extra, base := daemonConfig(t, "")
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	d := e.startDaemon(base)
	waitFor(t, 20*time.Second, "/readyz 200", func() bool { code, _ := d.get("/readyz"); return code == 200 })
	waitFor(t, 20*time.Second, "8 posts", func() bool { return len(e.slack.Messages()) == 8 })
	d.waitView(t)
	_, metrics := d.get("/metrics")
	for _, m := range allMetrics {
		if !strings.Contains(metrics, "\n"+m) {
			t.Errorf("/metrics lacks %s", m)
		}
	}
	checkBuildInfo(t, metrics)
	for _, zero := range []string{`watchdogd_actions_total{action="nudge",result="failed"} 0`, `watchdogd_findings{kind="stalled_turn"} 1`, "watchdogd_leader 1",
		`watchdogd_slack_rate_limited_total{reason="429"} 0`, `watchdogd_slack_rate_limited_total{reason="budget"} 0`} {
		if !strings.Contains(metrics, zero) {
			t.Errorf("/metrics lacks %q", zero)
		}
	}
	code, body := d.get("/api/v1/findings")
	var api struct {
		Report   struct{ Findings []json.RawMessage }
		Episodes []struct {
			Kind       string
			LastAction *struct{ State string } `json:"last_action"`
		}
	}
	if err := json.Unmarshal([]byte(body), &api); code != 200 || err != nil || len(api.Report.Findings) != 9 || len(api.Episodes) != 9 {
		t.Fatalf("/api/v1/findings %d %v: %.300s", code, err, body)
	}
	code, page := d.get("/")
	if code != 200 || strings.Count(page, `class="episode"`) != 9 || !strings.Contains(page, "Fix login redirect") {
		t.Fatalf("status page %d:\n%.500s", code, page)
	}
	if code, _ := d.get("/livez"); code != 200 {
		t.Fatal("/livez")
	}
	// A slow Slack keeps a cycle in flight; SIGTERM it mid-cycle.
	e.slack.SetFault(func(string, int) slacktest.Fault { return slacktest.Fault{Delay: 800 * time.Millisecond, Record: true} })
	if _, err := e.kandev.DB().Exec(`UPDATE task_session_messages SET metadata = json_set(metadata, '$.status', 'answered') WHERE type = 'clarification_request'`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "a cycle delivering", func() bool { return e.slack.Calls("chat.update") > 0 })
	d.terminate(t)
}

// TestStatusPageInChromium loads the status page in headless Chromium and
// checks the rendered rows.
func TestStatusPageInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed (Debian's chromium package; .ci/run installs it)")
	}
	extra, base := daemonConfig(t, "")
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	d := e.startDaemon(base)
	waitFor(t, 20*time.Second, "episodes, their first posts delivered", func() bool {
		_, p := d.get("/")
		return strings.Count(p, `class="episode"`) == 9 && strings.Contains(p, "slack delivered")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--no-first-run", "--disable-sync", "--user-data-dir="+filepath.Join(t.TempDir(), "chrome"),
		"--dump-dom", base+"/")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	rows := regexp.MustCompile(`<tr class="episode" data-kind="([a-z_]+)">`).FindAllStringSubmatch(string(dom), -1)
	kinds := map[string]int{}
	for _, r := range rows {
		kinds[r[1]]++
	}
	if len(rows) != 9 || kinds["never_started"] != 2 || kinds["shadowed_clarification"] != 1 {
		t.Fatalf("rendered rows %v:\n%.1000s", kinds, dom)
	}
	for _, want := range []string{"Upgrade Postgres driver", "sess-stalled", "slack delivered"} {
		if !strings.Contains(string(dom), want) {
			t.Errorf("rendered page lacks %q", want)
		}
	}
	// Oldest first: the shadowed question (70 min) leads.
	if strings.Index(string(dom), "Upgrade Postgres driver") > strings.Index(string(dom), "Fix login redirect") {
		t.Error("rows are not sorted by age")
	}
}

// TestSIGTERMDuringLongCycle: SIGTERM ends the daemon within 10s while its
// first cycle waits in cancel_and_nudge (kandev's database keeps the session
// RUNNING, so the cycle would wait 30s for it): on its own, and with a
// reload (POST /-/reload) waiting for that cycle to end.
func TestSIGTERMDuringLongCycle(t *testing.T) {
	for _, reload := range []bool{false, true} {
		t.Run(fmt.Sprintf("reload=%v", reload), func(t *testing.T) {
			extra, base := daemonConfig(t, "policy:\n  stalled_turn:\n    steps:\n      - {after: 0s, action: cancel_and_nudge}\n")
			e := newEnv(t, world(time.Now()), "sqlite", extra)
			// A claim that outlives the cancel's settle wait (check-config).
			writeConfigText(t, e, strings.Replace(baseConfig, "claim_ttl: 2s", "claim_ttl: 2m", 1))
			d := e.startDaemon(base)
			waitFor(t, 20*time.Second, "agent.cancel", func() bool { return len(e.ws.Cancels()) > 0 })
			if reload {
				go d.send(http.MethodPost, "/-/reload")
				time.Sleep(500 * time.Millisecond) // the reload now waits for the cycle
			}
			d.terminate(t)
		})
	}
}
