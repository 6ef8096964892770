package httpguard

import (
	"bufio"
	"crypto/tls"
	"net"
	"net/http/httptest"
	"testing"
	"time"
)

// dialSilent opens a TCP connection to srv and sends nothing, not even a
// TLS hello, as a client that never makes its request (or an attacker).
func dialSilent(t *testing.T, srv *httptest.Server) *client {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &client{c: c, r: bufio.NewReader(c)}
}

// speak makes a silent connection send its request: over TLS, after the
// handshake it had not begun.
func (cl *client) speak(t *testing.T, overTLS bool, path string) (string, error) {
	t.Helper()
	_ = cl.c.SetDeadline(time.Time{})
	if overTLS {
		tc := tls.Client(cl.c, &tls.Config{InsecureSkipVerify: true})
		cl = &client{c: tc, r: bufio.NewReader(tc)}
	}
	if err := cl.send(path); err != nil {
		return "", err
	}
	return cl.answer(5 * time.Second)
}

// TestConnGuardSilent: past maxSilent connections that have sent nothing,
// the server closes the longest silent, over plain HTTP and over TLS
// (silent before its handshake); the most recent ones stay open and are
// served when they speak.
func TestConnGuardSilent(t *testing.T) {
	for _, overTLS := range []bool{false, true} {
		srv, _ := guardedServer(t, 100, 10, 2, overTLS)
		var cls []*client
		for range 5 {
			cls = append(cls, dialSilent(t, srv))
			time.Sleep(20 * time.Millisecond) // accepted in this order
		}
		for i, cl := range cls[:3] {
			if !cl.closedByServer(5 * time.Second) {
				t.Errorf("tls %v: silent connection %d (of 5, 2 kept) still open", overTLS, i)
			}
		}
		for i, cl := range cls[3:] {
			if cl.closedByServer(200 * time.Millisecond) {
				t.Errorf("tls %v: one of the 2 most recent silent connections (%d) was closed", overTLS, i+3)
				continue
			}
			if body, err := cl.speak(t, overTLS, "/"); err != nil || body != "ok" {
				t.Errorf("tls %v: a kept silent connection is not served: %q %v", overTLS, body, err)
			}
		}
	}
}

// TestConnGuardCapSilent: at maxOpen connections, all silent, a new one
// gets in by closing the longest silent, and only that one.
func TestConnGuardCapSilent(t *testing.T) {
	srv, _ := guardedServer(t, 3, 10, 10, false)
	var cls []*client
	for range 3 {
		cls = append(cls, dialSilent(t, srv))
		time.Sleep(20 * time.Millisecond)
	}
	d := dialClient(t, srv)
	if err := d.send("/"); err != nil {
		t.Fatal(err)
	}
	if body, err := d.answer(5 * time.Second); err != nil || body != "ok" {
		t.Fatalf("a new connection at the cap of silent ones: %q %v", body, err)
	}
	if !cls[0].closedByServer(5 * time.Second) {
		t.Error("the longest silent connection was not closed to make room")
	}
	if cls[1].closedByServer(200 * time.Millisecond) {
		t.Error("more than one silent connection closed for one new")
	}
}

// TestConnGuardCapSilentGrace: at maxOpen connections, all silent but
// only for a moment (most often they have sent their request and the
// server, busy, has not read it yet), a new one waits until the longest
// silent has been so for SilentGrace, and then gets in by closing it.
func TestConnGuardCapSilentGrace(t *testing.T) {
	srv, _ := guardedServer(t, 3, 10, 10, false)
	var cls []*client
	for range 3 {
		cls = append(cls, dialSilent(t, srv))
	}
	opened := time.Now()
	d := dialClient(t, srv)
	if err := d.send("/"); err != nil {
		t.Fatal(err)
	}
	if cls[0].closedByServer(SilentGrace / 2) {
		t.Fatalf("a connection silent for less than %s was closed to make room", SilentGrace/2)
	}
	if body, err := d.answer(5 * time.Second); err != nil || body != "ok" {
		t.Fatalf("a new connection at the cap of silent ones: %q %v", body, err)
	}
	if took := time.Since(opened); took < SilentGrace {
		t.Errorf("room made after %s, before the longest silent had been so for %s", took.Round(time.Millisecond), SilentGrace)
	}
	if !cls[0].closedByServer(5 * time.Second) {
		t.Error("the longest silent connection was not closed to make room")
	}
}
