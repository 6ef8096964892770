package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fuzzCorpus reads the config fuzzer's corpus: each file's input, by name.
func fuzzCorpus(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("../../internal/config/testdata/fuzz/FuzzParse/*")
	if err != nil || len(files) < 15 {
		t.Fatalf("the config fuzzer's corpus: %d files, %v", len(files), err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(string(b), "\n", 3)
		quoted, ok := strings.CutPrefix(strings.TrimSpace(lines[1]), "[]byte(")
		if lines[0] != "go test fuzz v1" || !ok {
			t.Fatalf("%s is not a fuzz corpus file", f)
		}
		s, err := strconv.Unquote(strings.TrimSuffix(quoted, ")"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = []byte(s)
	}
	return out
}

// TestReloadSurvivesFuzzCorpus: every input of the config fuzzer's corpus,
// written over a running daemon's config file and reloaded (POST
// /-/reload), leaves the daemon running. One the loader refuses is
// answered 500 with the file's problems and changes nothing (the reload
// metric says failed, its success timestamp stays); one it accepts is
// answered 200 and the test's config is reloaded back. Afterwards the
// daemon still scans on its own config. The corpus holds schedules such as
// "TZ=UTC", on which robfig/cron's parser panics.
//
// Outside HTTP is sent through a proxy that is not there: a corpus input
// with a slack: block names Slack's real API.
func TestReloadSurvivesFuzzCorpus(t *testing.T) {
	corpus := fuzzCorpus(t)
	extra, base := daemonConfig(t, "")
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	d := e.startDaemon(base, "HTTPS_PROXY=http://127.0.0.1:1", "HTTP_PROXY=http://127.0.0.1:1")
	waitFor(t, 20*time.Second, "ready", func() bool { code, _ := d.get("/readyz"); return code == 200 })
	refused := 0
	for name, input := range corpus {
		if err := os.WriteFile(e.cfg, input, 0o600); err != nil {
			t.Fatal(err)
		}
		okAt := d.metric(t, "watchdogd_config_last_reload_success_timestamp_seconds")
		code, body := d.send(http.MethodPost, "/-/reload")
		switch code {
		case http.StatusInternalServerError:
			refused++
			if !strings.HasPrefix(body, "failed to reload config: "+e.cfg) {
				t.Errorf("%s: the refusal does not name the file: %q", name, body)
			}
			if d.metric(t, "watchdogd_config_last_reload_successful") != 0 ||
				d.metric(t, "watchdogd_config_last_reload_success_timestamp_seconds") != okAt {
				t.Errorf("%s: refused, but the reload metrics say it took effect", name)
			}
		case http.StatusOK:
			writeConfigText(t, e, baseConfig)
			if code, body := d.send(http.MethodPost, "/-/reload"); code != http.StatusOK {
				t.Fatalf("%s: reloading the test's config back: %d %q", name, code, body)
			}
		default:
			t.Fatalf("%s: POST /-/reload answered %d %q (did the daemon die?)\n%q", name, code, body, input)
		}
	}
	writeConfigText(t, e, baseConfig)
	if refused < 5 {
		t.Errorf("only %d corpus inputs refused", refused)
	}
	if code, body := d.send(http.MethodPost, "/-/reload"); code != http.StatusOK {
		t.Fatalf("the test's config: %d %q", code, body)
	}
	scans := d.metric(t, `watchdogd_scans_total{result="success"}`)
	waitFor(t, 10*time.Second, "cycles going on", func() bool { return d.metric(t, `watchdogd_scans_total{result="success"}`) >= scans+2 })
	d.terminate(t)
}

// TestCheckConfigAliasBomb: check-config on a 13 KB file that aliases a
// 1,000-key anchor 1,000 times reports the anchor's problems once each, at
// its line, not once per alias (a million lines).
func TestCheckConfigAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("thresholds: &t {")
	for i := range 1000 {
		fmt.Fprintf(&b, "k%d: 1, ", i)
	}
	b.WriteString("}\npolicy:\n  stalled_turn:\n    steps: [" + strings.Repeat("*t, ", 1000) + "]\n")
	cfg := filepath.Join(t.TempDir(), "bomb.yaml")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	r := watchdogd(t, nil, "check-config", cfg)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 1 || len(lines) > 2000 || !strings.HasPrefix(lines[0], "FAILED: "+cfg+":1: ") {
		t.Fatalf("exit %d, %d lines, the first %q", r.code, len(lines), lines[0])
	}
}
