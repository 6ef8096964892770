package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
)

// TestReadyWhileSlackIsSlow: readiness counts from the scan, not from the
// end of the cycle. Slack holds the first post for 20 s (within the
// client's timeout), so the first cycle lasts at least that long; the
// daemon, whose scan succeeded at once, is ready long before that: a slow
// Slack must not make a replica that reads kandev fine look stale. The
// status page and /api/v1/findings show the first cycle's episodes as
// soon as its plan is saved, while that post is still held.
func TestReadyWhileSlackIsSlow(t *testing.T) {
	extra, base := daemonConfig(t, "")
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	e.vars["extra"] = strings.Replace(extra, `"@every 1s"`, `"@every 5s"`, 1)
	slow := strings.NewReplacer("timeout: 1s", "timeout: 30s", "claim_ttl: 2s", "claim_ttl: 31s").Replace(baseConfig)
	writeConfigText(t, e, slow)
	const hold = 20 * time.Second
	e.slack.SetFault(func(method string, n int) slacktest.Fault {
		if method == "chat.postMessage" && n == 1 {
			return slacktest.Fault{Delay: hold, Record: true}
		}
		return slacktest.Fault{}
	})
	start := time.Now()
	d := e.startDaemon(base)
	waitFor(t, hold/2, "/readyz 200 while the first post is held", func() bool { code, _ := d.get("/readyz"); return code == 200 })
	if len(logLines(d.out.String(), "cycle finished")) != 0 || time.Since(start) >= hold {
		t.Fatalf("the first cycle ended before the daemon was ready:\n%s", d.out.String())
	}
	var api struct {
		Episodes []struct {
			SessionID string `json:"session_id"`
		} `json:"episodes"`
		Total int `json:"episodes_total"`
	}
	waitFor(t, hold/2, "the first cycle's episodes on the page and in the API while its first post is held", func() bool {
		_, body := d.get("/api/v1/findings")
		_, page := d.get("/")
		return json.Unmarshal([]byte(body), &api) == nil && api.Total > 0 && len(api.Episodes) == api.Total &&
			strings.Contains(page, api.Episodes[0].SessionID)
	})
	if len(logLines(d.out.String(), "cycle finished")) != 0 || time.Since(start) >= hold {
		t.Fatalf("the first cycle ended before its episodes were shown:\n%s", d.out.String())
	}
	waitFor(t, 2*hold, "the first cycle's end", func() bool { return len(logLines(d.out.String(), "cycle finished")) > 0 })
	d.terminate(t)
}
