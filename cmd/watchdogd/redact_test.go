package main

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPasswordsNeverPrinted: database URLs whose password pgx reads where
// net/url does not ('#' and '?' in it), an sslpassword, and a scheme one
// slash short are never printed with their secret: not in the start line,
// the "cycle failed" line, /readyz, the status page or the API's
// last_error. The start line names the database as pgx reads it.
func TestPasswordsNeverPrinted(t *testing.T) {
	const secret = "S3cretPW-do-not-log"
	cases := []struct{ url, start string }{
		{"postgres://alice:#" + secret + "@127.0.0.1:1/kandev?connect_timeout=1", `"database":"postgres://alice:xxxxx@127.0.0.1:1/kandev"`},
		{"postgres://alice:2024?" + secret + "@127.0.0.1:1/kandev?connect_timeout=1", `"database":"postgres://alice:xxxxx@127.0.0.1:1/kandev"`},
		{"postgres://alice@127.0.0.1:1/kandev?sslpassword=" + secret + "&connect_timeout=1", `"database":"postgres://alice@127.0.0.1:1/kandev"`},
		{"postgres:/alice:" + secret + "@127.0.0.1:1/kandev", `"database":"<unparseable database URL>"`},
		{"postgres://alice:" + secret + "@127.0.0.1:1/kandev?connect_timeout=" + secret, `"database":"<unparseable database URL>"`},
	}
	extra, base := daemonConfig(t, "")
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	for _, c := range cases {
		d := e.startDaemon(base, "WATCHDOGD_DATABASE_URL="+c.url)
		waitFor(t, 20*time.Second, "a failed cycle", func() bool { return strings.Contains(d.out.String(), "cycle failed") })
		outs := []string{}
		for _, p := range []string{"/readyz", "/", "/api/v1/findings"} {
			code, body := d.get(p)
			if code == 0 {
				t.Fatalf("GET %s: %s", p, body)
			}
			outs = append(outs, body)
		}
		if !strings.Contains(outs[2], `"last_error"`) {
			t.Errorf("%s: the API shows no last_error:\n%.1000s", c.url, outs[2])
		}
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		d.done <- <-d.done
		log := d.out.String()
		if !strings.Contains(log, c.start) {
			t.Errorf("%s: the start line does not name the database as %s:\n%.2000s", c.url, c.start, log)
		}
		for i, o := range append(outs, log) {
			if strings.Contains(o, secret) {
				t.Errorf("%s: the secret leaked in output %d:\n%.2000s", c.url, i, o)
			}
		}
	}
}
