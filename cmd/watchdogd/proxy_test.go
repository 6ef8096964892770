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

	"github.com/watchdogd/watchdogd/internal/ledger"
)

// TestThroughProxyWithCompanyCA is the chart's extraEnv setup for real:
// Slack is at a name only the proxy can reach (HTTPS_PROXY, a CONNECT
// tunnel), and Slack and kandev both present a certificate that only the
// company CA (SSL_CERT_DIR) vouches for. kandev, on loopback as an
// in-cluster service is under NO_PROXY, is reached directly. Without the CA
// nothing is sent, nothing is lost, and the log names the certificate.
func TestThroughProxyWithCompanyCA(t *testing.T) {
	extra := "policy:\n  interrupted_session:\n    steps: [{after: 0s, action: nudge}]\n"
	run := func(withCA bool) (*env, *connectProxy, result) {
		ds := world(time.Now())
		e := newEnv(t, ds, "sqlite", extra)
		e.startServers(ds, true)
		proxy := newConnectProxy(t, map[string]string{"example.com:443": e.slack.Listener.Addr().String()})
		e.vars["slack"] = "https://example.com/api/"
		e.writeConfig()
		caDir := t.TempDir()
		if withCA {
			ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.slack.Certificate().Raw})
			if err := os.WriteFile(filepath.Join(caDir, "company-ca.pem"), ca, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		vars := append(e.environ(), "HTTPS_PROXY=http://"+proxy.Listener.Addr().String(), "NO_PROXY=.svc,.cluster.local",
			"SSL_CERT_DIR="+caDir, "SSL_CERT_FILE="+filepath.Join(caDir, "none.pem"))
		r := watchdogd(t, vars, "run", "--once", "--config", e.cfg)
		if r.code != 0 {
			t.Fatalf("run --once: exit %d\n%s", r.code, r.stderr)
		}
		return e, proxy, r
	}

	e, proxy, r := run(false)
	if n := len(e.slack.Messages()); n != 0 || len(e.ws.Messages()) != 0 {
		t.Fatalf("without the CA %d Slack and %d kandev messages were sent", n, len(e.ws.Messages()))
	}
	if len(logLines(r.stderr, "certificate signed by unknown authority")) == 0 {
		t.Fatalf("the log does not name the certificate:\n%s", r.stderr)
	}
	if !slices.Contains(proxy.Seen(), "CONNECT example.com:443") {
		t.Fatalf("Slack was not reached through the proxy: %q", proxy.Seen())
	}
	owed := 0
	for _, a := range e.actions() {
		if a.Kind == ledger.KindLog {
			continue // written to the log, needs no TLS
		}
		owed++
		if a.State != ledger.StatePending {
			t.Errorf("%s action %s is %s without the CA, want pending (retried once the CA is there)", a.Kind, a.Key, a.State)
		}
	}
	if owed != 8 {
		t.Errorf("%d Slack and kandev actions owed, want 8", owed)
	}

	e, proxy, r = run(true)
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
