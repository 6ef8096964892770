package httpguard

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLoopbackNames: which listeners are on loopback only, and which Host
// headers name loopback.
func TestLoopbackNames(t *testing.T) {
	for listen, want := range map[string]bool{
		"127.0.0.1:9464": true, // the default
		"localhost:9464": true,
		"[::1]:9464":     true,
		"127.0.0.2:9464": true,
		"0.0.0.0:9464":   false, // the chart's: probes and Prometheus come by the pod's address
		":9464":          false,
		"10.0.0.5:9464":  false,
		"[::]:9464":      false,
		"nonsense":       false,
	} {
		if got := loopbackListen(listen); got != want {
			t.Errorf("loopbackListen(%q) = %v, want %v", listen, got, want)
		}
	}
	for host, want := range map[string]bool{
		"localhost:9464":     true,
		"LOCALHOST:9464":     true,
		"localhost.:9464":    true,
		"localhost":          true,
		"127.0.0.1:9464":     true,
		"127.0.0.1":          true,
		"[::1]:9464":         true,
		"[::1]":              true,
		"evil.example:9464":  false, // a rebinding site resolving to 127.0.0.1
		"evil.example":       false,
		"localhost.evil.com": false,
		"10.0.0.5:9464":      false,
		"":                   false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestOnlyLoopbackHosts: on a loopback listener a request for another
// host gets 421, whatever the path; on any other listener every host is
// served.
func TestOnlyLoopbackHosts(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	for _, c := range []struct {
		listen, host string
		want         int
	}{
		{"127.0.0.1:9464", "127.0.0.1:9464", 200},
		{"127.0.0.1:9464", "localhost:9464", 200},
		{"127.0.0.1:9464", "evil.example:9464", 421},
		{"127.0.0.1:9464", `"><script>`, 421}, // quoted, in plain text
		{"0.0.0.0:9464", "evil.example:9464", 200},
		{"0.0.0.0:9464", "10.1.2.3:9464", 200},
	} {
		r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		r.Host = c.host
		w := httptest.NewRecorder()
		OnlyLoopbackHosts(c.listen, ok).ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("listen %s, Host %q: %d, want %d", c.listen, c.host, w.Code, c.want)
		}
		if w.Code != 200 && (w.Header().Get("Content-Type") != "text/plain; charset=utf-8" || w.Header().Get("X-Content-Type-Options") != "nosniff" ||
			!strings.Contains(w.Body.String(), fmt.Sprintf("host %q is not this server", c.host))) {
			t.Errorf("the refusal is not plain text quoting the Host: %v %s", w.Header(), w.Body.String())
		}
	}
}

// TestCrossSite: what a browser sends from another site's page is
// refused; what a config reloader or curl sends, and a page of this
// server, is not.
func TestCrossSite(t *testing.T) {
	for _, c := range []struct {
		name    string
		host    string
		headers map[string]string
		refused bool
	}{
		{"configmap-reload or curl: no Origin, no Sec-Fetch-Site", "watchdogd:9464", nil, false},
		{"a page of this server", "localhost:9464", map[string]string{"Origin": "http://localhost:9464", "Sec-Fetch-Site": "same-origin"}, false},
		{"this server behind a proxy ending TLS", "watchdogd.example", map[string]string{"Origin": "https://watchdogd.example"}, false},
		{"another site's form", "localhost:9464", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, true},
		{"another site, no Origin sent", "localhost:9464", map[string]string{"Sec-Fetch-Site": "cross-site"}, true},
		{"another port of the same host (same-site)", "localhost:9464", map[string]string{"Origin": "http://localhost:3000", "Sec-Fetch-Site": "same-site"}, true},
		{"an opaque origin (sandboxed frame, file:)", "localhost:9464", map[string]string{"Origin": "null"}, true},
		{"an old browser: Origin only", "localhost:9464", map[string]string{"Origin": "http://evil.example"}, true},
	} {
		r := httptest.NewRequest(http.MethodPost, "/-/reload", nil)
		r.Host = c.host
		for k, v := range c.headers {
			r.Header.Set(k, v)
		}
		if got := CrossSite(r); (got != "") != c.refused {
			t.Errorf("%s: CrossSite = %q, want refused %v", c.name, got, c.refused)
		}
	}
}
