package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// request sends a bodiless request to the daemon with the Host and headers
// given, and returns the status and body.
func (d *daemonProc) request(t *testing.T, method, path, host string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, d.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHTTPRefusesOtherSites: on its default loopback listener the daemon
// answers only requests for a loopback name, not for a site that resolves
// to 127.0.0.1 (DNS rebinding); and POST /-/reload refuses what a browser
// sends from another site's page, while a config reloader's or curl's
// bodiless POST, and one from the daemon's own page, still reload.
func TestHTTPRefusesOtherSites(t *testing.T) {
	extra, base := daemonConfig(t, "")
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	d := e.startDaemon(base)
	d.waitView(t)
	own := strings.TrimPrefix(base, "http://")
	port := own[strings.LastIndex(own, ":"):]
	for _, c := range []struct {
		path, host string
		want       int
	}{
		{"/livez", own, 200},
		{"/livez", "localhost" + port, 200},
		{"/api/v1/findings", "localhost" + port, 200},
		{"/api/v1/findings", "rebind.evil.example" + port, 421},
		{"/", "rebind.evil.example" + port, 421},
		{"/metrics", "rebind.evil.example", 421},
	} {
		if code, body := d.request(t, http.MethodGet, c.path, c.host, nil); code != c.want {
			t.Errorf("GET %s with Host %s: %d %.200q, want %d", c.path, c.host, code, body, c.want)
		}
	}
	for _, c := range []struct {
		name    string
		headers map[string]string
		want    int
	}{
		{"a config reloader's bodiless POST", nil, 200},
		{"another site's form", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", "Content-Type": "text/plain"}, 403},
		{"another site, Sec-Fetch-Site only", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"another port on this host", map[string]string{"Origin": "http://localhost:1", "Sec-Fetch-Site": "same-site"}, 403},
		{"the daemon's own page", map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin"}, 200},
	} {
		code, body := d.request(t, http.MethodPost, "/-/reload", "", c.headers)
		if code != c.want {
			t.Errorf("%s: POST /-/reload %d %.200q, want %d", c.name, code, body, c.want)
		}
	}
	// The reloader logs a reload as it answers it: the line may follow the
	// answer by a moment.
	reloads := func() int { return len(logLines(d.out.String(), `"config reloaded"`)) }
	waitFor(t, 10*time.Second, "the 2 allowed reloads logged", func() bool { return reloads() >= 2 })
	if n := reloads(); n != 2 {
		t.Errorf("%d reloads logged, want the 2 allowed", n)
	}
}
