package main

import (
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// TestThroughProxyWithCompanyCA is the chart's extraEnv setup for real:
// Slack is at a name only the proxy can reach (HTTPS_PROXY, a CONNECT
// tunnel), and Slack and kandev both present a certificate that only the
// company CA (SSL_CERT_DIR) vouches for. kandev, on loopback as an
// in-cluster service is under NO_PROXY, is reached directly. Without the CA
// nothing is sent, the log names the certificate and every action stays
// owed; once the CA is mounted, each goes out exactly once.
func TestThroughProxyWithCompanyCA(t *testing.T) {
	ds := world(time.Now())
	e := newEnv(t, ds, "sqlite", "policy:\n  interrupted_session:\n    steps: [{after: 0s, action: nudge}]\n")
	e.startServers(ds, true)
	proxy := newConnectProxy(t, map[string]string{"example.com:443": e.slack.Listener.Addr().String()})
	e.vars["slack"] = "https://example.com/api/"
	e.writeConfig()
	caDir := t.TempDir()
	run := func() result {
		vars := append(e.environ(), "HTTPS_PROXY=http://"+proxy.Listener.Addr().String(), "NO_PROXY=.svc,.cluster.local",
			"SSL_CERT_DIR="+caDir, "SSL_CERT_FILE="+filepath.Join(caDir, "none.pem"))
		r := watchdogd(t, vars, "run", "--once", "--config", e.cfg)
		if r.code != 0 {
			t.Fatalf("run --once: exit %d\n%s", r.code, r.stderr)
		}
		return r
	}

	r := run()
	if n := len(e.slack.Messages()); n != 0 || len(e.ws.Messages()) != 0 {
		t.Fatalf("without the CA %d Slack and %d kandev messages were sent", n, len(e.ws.Messages()))
	}
	if len(logLines(r.stderr, "certificate signed by unknown authority")) == 0 {
		t.Fatalf("the log does not name the certificate:\n%s", r.stderr)
	}
	if !slices.Contains(proxy.Seen(), "CONNECT example.com:443") {
		t.Fatalf("Slack was not reached through the proxy: %q", proxy.Seen())
	}
	owed, retry := 0, time.Time{}
	for _, a := range e.actions() {
		if a.Kind == model.ActionLog {
			continue // written to the log, needs no TLS
		}
		owed++
		if a.NextAttempt.After(retry) {
			retry = a.NextAttempt
		}
		if a.State != model.StatePending {
			t.Errorf("%s action %s is %s without the CA, want pending (retried once the CA is there)", a.Kind, a.Key, a.State)
		}
	}
	if owed != 8 {
		t.Fatalf("%d Slack and kandev actions owed, want 8", owed)
	}

	// The CA is mounted; once the retries are due, everything owed goes out.
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.slack.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(caDir, "company-ca.pem"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(retry) + 100*time.Millisecond)
	r = run()
	if posts := e.exactlyOnce(); posts != 7 || len(e.slack.Messages()) != 7 {
		t.Fatalf("%d delivered posts and %d Slack messages, want 7\n%s", posts, len(e.slack.Messages()), r.stderr)
	}
	if msgs := e.ws.Messages(); len(msgs) != 1 || msgs[0].SessionID != "sess-parked" {
		t.Fatalf("kandev over wss got %+v, want the parked session's nudge\n%s", msgs, r.stderr)
	}
	for _, s := range proxy.Seen() {
		if s != "CONNECT example.com:443" {
			t.Errorf("the proxy saw %q; kandev is under NO_PROXY (loopback) and Slack only tunnels", s)
		}
	}
}

// connectProxy is a forward proxy that only tunnels (CONNECT) to the hosts
// it routes, as a company's egress proxy does, and records every request.
type connectProxy struct {
	*httptest.Server
	routes map[string]string
	mu     sync.Mutex
	seen   []string
}

func newConnectProxy(t *testing.T, routes map[string]string) *connectProxy {
	p := &connectProxy{routes: routes}
	p.Server = httptest.NewServer(http.HandlerFunc(p.handle))
	t.Cleanup(p.Close)
	return p
}

// Seen lists the requests the proxy received, as "METHOD host".
func (p *connectProxy) Seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

func (p *connectProxy) handle(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.seen = append(p.seen, r.Method+" "+r.Host)
	p.mu.Unlock()
	target, ok := p.routes[r.Host]
	if r.Method != http.MethodConnect || !ok {
		http.Error(w, "no route to "+r.Host, http.StatusForbidden)
		return
	}
	up, err := net.Dial("tcp", target)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		_ = up.Close()
		return
	}
	_, _ = io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n")
	go func() {
		_, _ = io.Copy(up, buf) // buf holds what the client sent after CONNECT
		_ = up.(*net.TCPConn).CloseWrite()
	}()
	_, _ = io.Copy(conn, up)
	_ = conn.Close()
	_ = up.Close()
}
