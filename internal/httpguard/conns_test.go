package httpguard

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"
)

// client is one raw keep-alive connection to a test server.
type client struct {
	c net.Conn
	r *bufio.Reader
}

func dialClient(t *testing.T, srv *httptest.Server) *client {
	t.Helper()
	var c net.Conn
	var err error
	addr := srv.Listener.Addr().String()
	if srv.TLS != nil {
		c, err = tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	} else {
		c, err = net.Dial("tcp", addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &client{c: c, r: bufio.NewReader(c)}
}

// send writes a GET of path on the connection, keeping it alive.
func (cl *client) send(path string) error {
	_, err := fmt.Fprintf(cl.c, "GET %s HTTP/1.1\r\nHost: test\r\n\r\n", path)
	return err
}

// answer reads one response's body within d.
func (cl *client) answer(d time.Duration) (string, error) {
	_ = cl.c.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(cl.r, nil)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// closedByServer says whether the server closed the connection (a read
// meets EOF or a reset within d) rather than keeping it open.
func (cl *client) closedByServer(d time.Duration) bool {
	_ = cl.c.SetReadDeadline(time.Now().Add(d))
	_, err := cl.r.ReadByte()
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

// guardedServer serves "ok" on /, and on /block waits for release, behind
// a Guard of maxOpen, maxIdle and maxSilent connections; over TLS when
// tls is set.
func guardedServer(t *testing.T, maxOpen, maxIdle, maxSilent int, tls bool) (*httptest.Server, func()) {
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/block", func(w http.ResponseWriter, _ *http.Request) { <-release; _, _ = w.Write([]byte("released")) })
	srv := httptest.NewUnstartedServer(mux)
	g := New(srv.Listener, maxOpen, maxIdle, maxSilent)
	srv.Listener, srv.Config.ConnState = g, g.Track
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	t.Cleanup(unblock) // before Close, which waits for the handlers
	return srv, unblock
}

// TestConnGuardIdle: past maxIdle idle keep-alive connections the server
// closes the longest idle, over plain HTTP and over TLS (where the server
// sees the TLS connection, not the one the listener accepted), and keeps
// the most recent ones, which still serve requests.
func TestConnGuardIdle(t *testing.T) {
	for _, tls := range []bool{false, true} {
		srv, _ := guardedServer(t, 100, 2, 100, tls)
		var cls []*client
		for range 5 {
			cl := dialClient(t, srv)
			if err := cl.send("/"); err != nil {
				t.Fatal(err)
			}
			if body, err := cl.answer(5 * time.Second); err != nil || body != "ok" {
				t.Fatalf("tls %v: %q %v", tls, body, err)
			}
			cls = append(cls, cl)
			time.Sleep(50 * time.Millisecond) // the server marks it idle after answering
		}
		for i, cl := range cls[:3] {
			if !cl.closedByServer(5 * time.Second) {
				t.Errorf("tls %v: idle connection %d (of 5, 2 kept) still open", tls, i)
			}
		}
		for i, cl := range cls[3:] {
			if cl.closedByServer(200 * time.Millisecond) {
				t.Errorf("tls %v: one of the 2 most recent idle connections (%d) was closed", tls, i+3)
				continue
			}
			if err := cl.send("/"); err != nil {
				t.Fatal(err)
			}
			if body, err := cl.answer(5 * time.Second); err != nil || body != "ok" {
				t.Errorf("tls %v: a kept idle connection does not serve: %q %v", tls, body, err)
			}
		}
	}
}

// TestConnGuardCap: at maxOpen connections a new one gets in by closing
// the longest idle; with every connection busy it waits (unanswered, not
// refused) until one goes idle, which then makes room.
func TestConnGuardCap(t *testing.T) {
	srv, release := guardedServer(t, 3, 10, 10, false)
	a, b, c := dialClient(t, srv), dialClient(t, srv), dialClient(t, srv)
	for _, cl := range []*client{a, b} {
		if err := cl.send("/"); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.answer(5 * time.Second); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := c.send("/block"); err != nil {
		t.Fatal(err)
	}
	// Three open (a, b idle; c busy): d gets in, a (the longest idle) goes.
	d := dialClient(t, srv)
	if err := d.send("/"); err != nil {
		t.Fatal(err)
	}
	if body, err := d.answer(5 * time.Second); err != nil || body != "ok" {
		t.Fatalf("a new connection at the cap: %q %v", body, err)
	}
	if !a.closedByServer(5 * time.Second) {
		t.Error("the longest idle connection was not closed to make room")
	}
	if b.closedByServer(200 * time.Millisecond) {
		t.Error("more than one idle connection closed for one new")
	}
	// Every slot busy (b, c, d): e waits.
	for _, cl := range []*client{b, d} {
		if err := cl.send("/block"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	e := dialClient(t, srv)
	if err := e.send("/"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.answer(500 * time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a connection past the cap with none idle: %v, want no answer yet", err)
	}
	release() // b, c and d answer and go idle: one makes room for e
	if body, err := e.answer(5 * time.Second); err != nil || body != "ok" {
		t.Fatalf("the waiting connection once others went idle: %q %v", body, err)
	}
}
