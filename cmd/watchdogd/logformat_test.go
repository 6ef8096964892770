package main

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/testca"
)

// consoleLine is a line of zap's console encoder: time, level, message.
var consoleLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\S+\t(DEBUG|INFO|WARN|ERROR)\t`)

// TestEveryLineObeysLogFormat: every line the daemon writes, its own and
// those of the libraries it serves HTTP with (exporter-toolkit's start
// lines, net/http's failed TLS handshakes), is in the format and at the
// level that --log.format and --log.level set over the config file's log:
// block, and a reload (SIGHUP) keeps them.
func TestEveryLineObeysLogFormat(t *testing.T) {
	t.Run("console at warn over the file's json at debug", func(t *testing.T) {
		out := logFormatDaemon(t, "level: debug\n  format: json", "--log.level=warn", "--log.format", "console")
		for _, line := range lines(out) {
			m := consoleLine.FindStringSubmatch(line)
			if m == nil || m[1] == "DEBUG" || m[1] == "INFO" {
				t.Errorf("not a console line at warn or above: %q", line)
			}
		}
	})
	t.Run("json at info over the file's console at debug", func(t *testing.T) {
		out := logFormatDaemon(t, "level: debug\n  format: console", "--log.format=json", "--log.level=info")
		var toolkit bool
		for _, line := range lines(out) {
			var l struct{ Level, Msg string }
			if err := json.Unmarshal([]byte(line), &l); err != nil || l.Msg == "" || l.Level == "debug" || l.Level == "" {
				t.Errorf("not a JSON line at info or above: %q", line)
			}
			toolkit = toolkit || l.Msg == "TLS is enabled."
		}
		if !toolkit {
			t.Error("exporter-toolkit's start lines are not in the log")
		}
	})
}

// logFormatDaemon runs the daemon behind TLS with the given log: block and
// flags, makes it log a failed TLS handshake, reloads it with SIGHUP,
// lets it run two more cycles and a failed handshake, stops it and
// returns what it wrote.
func logFormatDaemon(t *testing.T, logBlock string, flags ...string) string {
	ca, err := testca.New()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, certFile, keyFile, err := ca.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	web := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(web, fmt.Appendf(nil, "tls_server_config:\n  cert_file: %s\n  key_file: %s\n", certFile, keyFile), 0o600); err != nil {
		t.Fatal(err)
	}
	extra, base := daemonConfig(t, "  web_config_file: "+web+"\n")
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	cfg, err := os.ReadFile(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg = []byte(strings.Replace(string(cfg), "level: debug\n  format: json", logBlock, 1))
	if err := os.WriteFile(e.cfg, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, append([]string{"run", "--config", e.cfg}, flags...)...)
	cmd.Env = append(os.Environ(), e.environ()...)
	out := newSyncBuffer()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("daemon output:\n%s", out.String())
		}
	})
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool}}}
	https := strings.Replace(base, "http://", "https://", 1)
	get := func(path string) (int, string) {
		resp, err := client.Get(https + path)
		if err != nil {
			return 0, err.Error()
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	waitFor(t, 20*time.Second, "/readyz 200 over TLS", func() bool { code, _ := get("/readyz"); return code == 200 })
	addr := strings.TrimPrefix(base, "http://")
	badHandshake(t, addr)
	waitFor(t, 10*time.Second, "the failed handshake logged", func() bool { return strings.Count(out.String(), "TLS handshake error") == 1 })
	_, before := get("/metrics")
	_ = cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, 10*time.Second, "the reload", func() bool {
		_, now := get("/metrics")
		return reloadedAt(now) > reloadedAt(before)
	})
	time.Sleep(2500 * time.Millisecond) // two more cycles at @every 1s
	badHandshake(t, addr)
	waitFor(t, 10*time.Second, "the second failed handshake logged", func() bool { return strings.Count(out.String(), "TLS handshake error") == 2 })
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no exit within 15s of SIGTERM")
	}
	return out.String()
}

// badHandshake opens a connection to the TLS listener and sends bytes that
// are not a TLS handshake (nor plain HTTP, which net/http answers without
// logging).
func badHandshake(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.Write([]byte("hello, this is not TLS\r\n\r\n"))
	_, _ = io.Copy(io.Discard, c)
}

// reloadedAt is the daemon's last successful reload, from its metrics.
func reloadedAt(metrics string) float64 {
	var v float64
	if m := regexp.MustCompile(`(?m)^watchdogd_config_last_reload_success_timestamp_seconds (\S+)$`).FindStringSubmatch(metrics); m != nil {
		_, _ = fmt.Sscan(m[1], &v)
	}
	return v
}

// lines are the non-empty lines of out.
func lines(out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) != "" {
			ls = append(ls, l)
		}
	}
	return ls
}
