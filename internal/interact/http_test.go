package interact_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/interact"
	"github.com/watchdogd/watchdogd/internal/testport"
)

// TestListenBoundsConnections: the HTTP mode's own listener is reachable
// by whoever reaches Slack's side of it, so 300 connections that never
// send a byte cost it no more than its bound of connections (the oldest
// are closed to make room once silent for httpguard.SilentGrace, where
// the server alone would hold each for its header timeout), and a signed
// request on a new connection is still answered.
func TestListenBoundsConnections(t *testing.T) {
	const conns = 300
	port, err := testport.Free()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	secret := config.Secret("s3cret")
	s := &interact.HTTP{Handler: &interact.Handler{Log: zap.NewNop(), Count: func(string) {}}, Secret: func() config.Secret { return secret }, Now: time.Now}
	srv, err := s.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	var closed atomic.Int32
	var wg sync.WaitGroup
	for range conns {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		wg.Go(func() {
			_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
			if _, err := c.Read(make([]byte, 1)); err != nil && !isTimeout(err) {
				closed.Add(1) // the server closed it
			}
		})
	}
	wg.Wait()
	if n := int(closed.Load()); n < conns-interact.MaxSilentConns {
		t.Errorf("the server closed %d of %d silent connections within 3 s, want at least %d (it keeps %d)", n, conns, conns-interact.MaxSilentConns, interact.MaxSilentConns)
	}
	body := []byte("payload=%7B%22type%22%3A%22block_actions%22%7D")
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+interact.Path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = interact.Sign(secret, body, time.Now())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("a signed request past %d silent connections: %v", conns, err)
	}
	_ = resp.Body.Close()
	// A block_actions payload without a watchdogd button: acknowledged,
	// nothing done.
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a signed request: %s, want 200 OK", resp.Status)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
