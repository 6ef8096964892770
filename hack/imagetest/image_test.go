//go:build image

package imagetest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
	"github.com/watchdogd/watchdogd/internal/testca"
	"github.com/watchdogd/watchdogd/internal/testport"
)

const slackToken = "xoxb-image-test-token"

// uid is the image's user (USER 65532:65532), which owns the writable
// directories as the chart's fsGroup makes them.
const uid = 65532

// TestImage runs the image built by `make image` the way the chart runs
// it: a read-only root filesystem, uid 65532, the config and kandev's
// database mounted. It checks the image's labels and user, `version`,
// `demo`, `check-config` on a config whose quiet hours name a time zone
// (the image has no zoneinfo: the binary embeds it), that Slack over HTTPS
// to a loopback stand-in signed by a test CA fails without that CA and
// works once it is mounted, that /readyz turns ready, and that SIGTERM
// stops the daemon with exit 0.
func TestImage(t *testing.T) {
	e := newEngine(t)
	checkMetadata(t, e)

	r := e.runOnce("version", nil, "version")
	if want := "watchdogd " + *versionFlag + " ("; r.code != 0 || !strings.HasPrefix(r.stdout, want) {
		t.Fatalf("version: want a line starting %q, got %s", want, r)
	}
	if r := e.runOnce("shell", []string{"--entrypoint", "/bin/sh"}, "-c", "true"); r.code == 0 || !strings.Contains(r.stderr, "/bin/sh") {
		t.Fatalf("the image has a shell; it should hold only watchdogd: %s", r)
	}
	// demo writes its scratch database under /tmp, a tmpfs as in the chart.
	if r := e.runOnce("demo", []string{"--tmpfs", "/tmp"}, "demo"); r.code != 0 || !strings.Contains(r.stdout, "Demo kandev database") {
		t.Fatalf("demo: %s", r)
	}

	ca, err := testca.New()
	if err != nil {
		t.Fatal(err)
	}
	slack := slacktest.NewTLSConfig(slackToken, ca.ServerConfig())
	t.Cleanup(slack.Close)
	w := newWorld(t, slack.APIURL(), ca.CertPEM)

	if r := e.runOnce("check", w.mounts("none"), "check-config", "/etc/watchdogd/config/watchdogd.yaml"); r.code != 0 ||
		!strings.Contains(r.stdout, "SUCCESS: /etc/watchdogd/config/watchdogd.yaml") {
		t.Fatalf("check-config (quiet hours in %s): %s", w.zone, r)
	}

	// Without the test CA, Slack's certificate is refused and nothing is sent.
	r = e.runOnce("untrusted", w.mounts("untrusted"), "run", "--once", "--config", "/etc/watchdogd/config/watchdogd.yaml")
	if !strings.Contains(r.stderr, "certificate signed by unknown authority") || len(slack.Messages()) != 0 {
		t.Fatalf("without the CA: %d Slack messages, want 0 and the log naming the certificate: %s", len(slack.Messages()), r)
	}

	// The daemon, with the CA mounted where SSL_CERT_DIR points.
	run := e.name("run")
	opts := append(w.mounts("run"), "-v", w.caDir+":/etc/watchdogd/ca:ro", "-e", "SSL_CERT_DIR=/etc/watchdogd/ca")
	e.must(append(append(e.runArgs(run, true, opts...), e.image), "run", "--config", "/etc/watchdogd/config/watchdogd.yaml")...)
	logs := func() string { r := e.cmd("logs", run); return r.stdout + r.stderr }
	waitFor(t, 90*time.Second, "/readyz 200", logs, func() bool { return get(w.base+"/readyz") == http.StatusOK })
	waitFor(t, 90*time.Second, "Slack message over TLS trusted through the mounted CA", logs,
		func() bool { return len(slack.Messages()) > 0 })
	ledger := filepath.Join(w.dir, "state-run", "ledger.db")
	if fi, err := os.Stat(ledger); err != nil {
		t.Fatalf("the daemon wrote no ledger: %v\n%s", err, logs())
	} else if owner := fi.Sys().(*syscall.Stat_t).Uid; owner != uid {
		t.Errorf("the ledger is owned by uid %d, want %d (the image's user)", owner, uid)
	}

	// At 3 a.m., through exec: the operator commands find the config
	// without --config (the image sets WATCHDOGD_CONFIG), and a silence
	// needs an author, since the image's user names nobody.
	if r := e.cmd("exec", run, "/usr/local/bin/watchdogd", "episodes", "list", "--open"); r.code != 0 || !strings.Contains(r.stdout, "stalled_turn") {
		t.Errorf("episodes list in the container, no --config: %s", r)
	}
	if r := e.cmd("exec", run, "/usr/local/bin/watchdogd", "silence", "add", "kind=stalled_turn", "-d", "1h", "-c", "image test"); r.code != 2 ||
		!strings.Contains(r.stderr, "needs --author (-a): $USER is not set here") {
		t.Errorf("silence add without an author in the container: %s", r)
	}
	if r := e.cmd("exec", run, "/usr/local/bin/watchdogd", "silence", "add", "kind=stalled_turn", "-d", "1h", "-c", "image test", "-a", "oncall"); r.code != 0 {
		t.Errorf("silence add -a in the container: %s", r)
	}

	e.must("kill", "--signal", "TERM", run)
	code := strings.TrimSpace(e.must("wait", run).stdout)
	if code != "0" {
		t.Fatalf("after SIGTERM the daemon exited %s, want 0\n%s", code, logs())
	}
}

// checkMetadata holds the image to its labels and user.
func checkMetadata(t *testing.T, e *engine) {
	t.Helper()
	var img []struct {
		Config struct {
			User   string
			Labels map[string]string
		}
	}
	r := e.must("image", "inspect", e.image)
	if err := json.Unmarshal([]byte(r.stdout), &img); err != nil || len(img) != 1 {
		t.Fatalf("image inspect: %v\n%s", err, r.stdout)
	}
	if u := img[0].Config.User; u != "65532:65532" {
		t.Errorf("the image's user is %q, want 65532:65532", u)
	}
	want := map[string]string{
		"org.opencontainers.image.version":  *versionFlag,
		"org.opencontainers.image.revision": head(t),
		"org.opencontainers.image.source":   "https://github.com/watchdogd/watchdogd",
	}
	for k, v := range want {
		if got := img[0].Config.Labels[k]; got != v {
			t.Errorf("label %s is %q, want %q", k, got, v)
		}
	}
}

// head is the commit checked out, which the image was built from.
func head(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// world is what the containers mount: the config, kandev's database and a
// ledger directory per container, and the test CA.
type world struct {
	dir, caDir, base, zone string
}

// newWorld writes kandev's demo database, the test CA and a config that
// posts to slackURL, listens on a free loopback port and has quiet hours in
// a named zone, hours away from now so they hold nothing back.
func newWorld(t *testing.T, slackURL string, caPEM []byte) *world {
	t.Helper()
	w := &world{dir: t.TempDir(), zone: "Pacific/Chatham"}
	w.caDir = filepath.Join(w.dir, "ca")
	for _, d := range []string{"config", "kandev", "ca", "state-none", "state-untrusted", "state-run"} {
		if err := os.MkdirAll(filepath.Join(w.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	db, err := kandevdb.CreateSQLite(filepath.Join(w.dir, "kandev", "kandev.db"), kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Write(context.Background(), kandevdb.Demo(time.Now())); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	port, err := testport.Free()
	if err != nil {
		t.Fatal(err)
	}
	w.base = fmt.Sprintf("http://127.0.0.1:%d", port)
	loc, err := time.LoadLocation(w.zone)
	if err != nil {
		t.Fatal(err)
	}
	quiet := time.Now().In(loc).Add(6 * time.Hour)
	cfg := fmt.Sprintf(`database:
  url: sqlite:///data/kandev/kandev.db
state:
  url: sqlite:///data/state/ledger.db
schedule: "@every 2s"
slack:
  api_url: %s
  timeout: 5s
  default_channel: C0IMAGETEST
quiet_hours:
  timezone: %s
  start: "%s"
  end: "%s"
http:
  listen: 127.0.0.1:%d
log:
  level: info
  format: json
`, slackURL, w.zone, quiet.Format("15:04"), quiet.Add(time.Hour).Format("15:04"), port)
	write(t, filepath.Join(w.dir, "config", "watchdogd.yaml"), cfg)
	write(t, filepath.Join(w.caDir, "test-ca.pem"), string(caPEM))
	w.own(t)
	return w
}

// own gives the directories the daemon writes to the image's user; the
// rest stays readable to it.
func (w *world) own(t *testing.T) {
	t.Helper()
	if err := os.Chmod(w.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"kandev", "state-none", "state-untrusted", "state-run"} {
		err := filepath.Walk(filepath.Join(w.dir, d), func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			if os.Geteuid() != 0 {
				return os.Chmod(p, 0o777) // rootless: the container's 65532 is someone else here
			}
			return os.Chown(p, uid, uid)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// mounts mounts the config read-only, kandev's database and the ledger
// directory state-<ledger>, and gives the Slack token in the environment.
func (w *world) mounts(ledger string) []string {
	return []string{
		"-v", filepath.Join(w.dir, "config") + ":/etc/watchdogd/config:ro",
		"-v", filepath.Join(w.dir, "kandev") + ":/data/kandev",
		"-v", filepath.Join(w.dir, "state-"+ledger) + ":/data/state",
		"-e", "WATCHDOGD_SLACK_TOKEN=" + slackToken,
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func get(url string) int {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// waitFor polls cond until it holds or the deadline passes, then fails
// with the container's log.
func waitFor(t *testing.T, d time.Duration, what string, logs func() string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("no %s within %s\n%s", what, d, logs())
}
