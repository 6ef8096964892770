package main

import (
	"strings"
	"testing"
	"time"
)

// TestCleartextTokensWarned: a daemon whose Slack API URL is http:// and
// whose kandev URL is http:// (its WebSocket ws://), each to a host that
// is not loopback and with a token configured, says so once at start,
// naming each key and never the token; over loopback (the harness's own
// servers) it says nothing.
func TestCleartextTokensWarned(t *testing.T) {
	const warning = "a token is sent without TLS"
	extra, base := daemonConfig(t, "")
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	d := e.startDaemon(base)
	waitFor(t, 20*time.Second, "the start line", func() bool { return len(logLines(d.out.String(), "watchdogd started")) > 0 })
	d.terminate(t)
	if lines := logLines(d.out.String(), warning); len(lines) != 0 {
		t.Errorf("warned over loopback: %q", lines)
	}
	// 192.0.2.1 is TEST-NET-1: never answers; only the start matters here.
	e.vars["slack"], e.vars["ws"] = "http://192.0.2.1:9/api/", "http://192.0.2.1:9"
	e.writeConfig()
	d = e.startDaemon(base)
	waitFor(t, 20*time.Second, "the start line", func() bool { return len(logLines(d.out.String(), "watchdogd started")) > 0 })
	d.terminate(t)
	lines := logLines(d.out.String(), warning)
	if len(lines) != 2 || !strings.Contains(lines[0], `"key":"slack.api_url"`) || !strings.Contains(lines[1], `"key":"kandev.base_url"`) {
		t.Errorf("want one warning for slack.api_url, then one for kandev.base_url; got %q", lines)
	}
	for _, secret := range []string{slackToken, kandevToken} {
		if strings.Contains(d.out.String(), secret) {
			t.Errorf("a token leaked:\n%.2000s", d.out.String())
		}
	}
}
