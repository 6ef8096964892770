package interact_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/interact"
)

const secret = config.Secret("s3cret")

// endpoint is the HTTP mode's handler on a test server, counting what it
// refuses.
type endpoint struct {
	addr    string
	results sync.Map // result → *atomic.Int32
	shed    atomic.Int32
}

func newEndpoint(t *testing.T, limits func(*interact.HTTP)) *endpoint {
	t.Helper()
	e := &endpoint{}
	h := &interact.HTTP{Handler: &interact.Handler{Log: zap.NewNop(), Count: func(r string) {
		n, _ := e.results.LoadOrStore(r, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
	}}, Secret: func() config.Secret { return secret }, Now: time.Now, Shed: func() { e.shed.Add(1) }}
	if limits != nil {
		limits(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	e.addr = strings.TrimPrefix(srv.URL, "http://")
	return e
}

func (e *endpoint) count(result string) int {
	n, ok := e.results.Load(result)
	if !ok {
		return 0
	}
	return int(n.(*atomic.Int32).Load())
}

// notOurs is a signed form Slack could send that holds no watchdogd
// button: answered 200, nothing done.
var notOurs = "payload=" + url.QueryEscape(`{"type":"block_actions","actions":[]}`)

// request is one raw request: headers, and the part of its body sent.
type request struct {
	h    http.Header
	size int    // its Content-Length; -1 for chunked
	sent string // what is sent of the body at once
}

// send opens a connection, sends r and returns the connection and a
// channel that gets the answer's status (0 when the connection closed
// without one) or nothing before the test ends.
func (e *endpoint) send(t *testing.T, r request) (net.Conn, <-chan int) {
	t.Helper()
	c, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\n", interact.Path, e.addr)
	for k, vs := range r.h {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	if r.size < 0 {
		b.WriteString("Transfer-Encoding: chunked\r\n\r\n")
		if r.sent != "" {
			fmt.Fprintf(&b, "%x\r\n%s\r\n", len(r.sent), r.sent)
		}
	} else {
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", r.size, r.sent)
	}
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			got <- 0
			return
		}
		_ = resp.Body.Close()
		got <- resp.StatusCode
	}()
	return c, got
}

// answer waits for an answer up to within: -1 when none came.
func answer(got <-chan int, within time.Duration) int {
	select {
	case code := <-got:
		return code
	case <-time.After(within):
		return -1
	}
}

// TestRefusedBeforeTheBody: what the headers show is checked before any
// of the body is read, and before the signing secret is (its file, read
// for each request a rotation takes: a flood of unsigned requests reads
// nothing). Each request below announces a body of 1,000 bytes and sends
// none: it is answered at once, never waited for; the signed request with
// its body is answered 200.
func TestRefusedBeforeTheBody(t *testing.T) {
	var reads atomic.Int32
	e := newEndpoint(t, func(h *interact.HTTP) {
		h.Secret = func() config.Secret { reads.Add(1); return secret }
	})
	now := time.Now()
	signed := interact.Sign(secret, []byte(notOurs), now)
	with := func(f func(h http.Header)) http.Header {
		h := signed.Clone()
		f(h)
		return h
	}
	sig := signed.Get("X-Slack-Signature")
	cases := []struct {
		name string
		h    http.Header
		size int
		want int
	}{
		// Signed 6 minutes ago (a replay), or 6 minutes ahead.
		{"stale", interact.Sign(secret, []byte(notOurs), now.Add(-6*time.Minute)), 1000, 401},
		{"ahead", interact.Sign(secret, []byte(notOurs), now.Add(6*time.Minute)), 1000, 401},
		{"no timestamp", with(func(h http.Header) { h.Del("X-Slack-Request-Timestamp") }), 1000, 401},
		{"a timestamp not a number", with(func(h http.Header) { h.Set("X-Slack-Request-Timestamp", "soon") }), 1000, 401},
		{"no signature", with(func(h http.Header) { h.Del("X-Slack-Signature") }), 1000, 401},
		{"another version", with(func(h http.Header) { h.Set("X-Slack-Signature", "v1="+sig[3:]) }), 1000, 401},
		{"too short", with(func(h http.Header) { h.Set("X-Slack-Signature", sig[:len(sig)-1]) }), 1000, 401},
		{"too long", with(func(h http.Header) { h.Set("X-Slack-Signature", sig+"0") }), 1000, 401},
		{"not hex", with(func(h http.Header) { h.Set("X-Slack-Signature", sig[:len(sig)-1]+"g") }), 1000, 401},
		{"upper-case hex", with(func(h http.Header) { h.Set("X-Slack-Signature", "v0="+strings.ToUpper(sig[3:])) }), 1000, 401},
		// Well signed, but announcing more than any click of watchdogd's.
		{"too large", signed, interact.MaxBody + 1, 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, got := e.send(t, request{h: c.h, size: c.size})
			if code := answer(got, 2*time.Second); code != c.want {
				t.Fatalf("answered %d (-1: not within 2 s, waiting for the body), want %d at once", code, c.want)
			}
		})
	}
	if n := e.count("unauthorized"); n != len(cases)-1 {
		t.Errorf("%d counted unauthorized, want %d", n, len(cases)-1)
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("the signing secret read %d times, want once (for the well-signed request too large)", n)
	}
	_, got := e.send(t, request{h: signed, size: len(notOurs), sent: notOurs})
	if code := answer(got, 2*time.Second); code != http.StatusOK {
		t.Fatalf("the signed request: %d", code)
	}
}

// TestNoSecretRefusesUnread: with no signing secret (its file unreadable),
// every request is refused before its body is read.
func TestNoSecretRefusesUnread(t *testing.T) {
	e := &endpoint{}
	h := &interact.HTTP{Handler: &interact.Handler{Log: zap.NewNop(), Count: func(string) {}}, Secret: func() config.Secret { return "" }, Now: time.Now}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	e.addr = strings.TrimPrefix(srv.URL, "http://")
	_, got := e.send(t, request{h: interact.Sign("", []byte(notOurs), time.Now()), size: 1000})
	if code := answer(got, 2*time.Second); code != http.StatusUnauthorized {
		t.Fatalf("answered %d, want 401 at once", code)
	}
}

// TestBodyReadWithin: a body still arriving ReadWithin after its headers
// is answered 408 then, and counted malformed; so is one that stops
// coming.
func TestBodyReadWithin(t *testing.T) {
	e := newEndpoint(t, func(h *interact.HTTP) { h.ReadWithin = 500 * time.Millisecond })
	signed := interact.Sign(secret, []byte(notOurs), time.Now())
	trickling, got := e.send(t, request{h: signed, size: len(notOurs), sent: notOurs[:1]})
	go func() {
		for _, c := range notOurs[1:] {
			if _, err := trickling.Write([]byte{byte(c)}); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	_, stopped := e.send(t, request{h: signed, size: len(notOurs), sent: notOurs[:10]})
	for _, c := range []<-chan int{got, stopped} {
		if code := answer(c, 3*time.Second); code != http.StatusRequestTimeout {
			t.Fatalf("answered %d (-1: not within 3 s), want 408 after 0.5 s", code)
		}
	}
	if n := e.count("malformed"); n != 2 {
		t.Errorf("%d counted malformed, want 2", n)
	}
}

// TestSlowBodyCutOffForAWaitingOne: while requests wait their turn, a
// body that has taken longer than SlowAfter is cut off (503, shed) and
// its slot goes to the first waiting, whose whole body is read and
// answered; bodies still within SlowAfter are not cut.
func TestSlowBodyCutOffForAWaitingOne(t *testing.T) {
	e := newEndpoint(t, func(h *interact.HTTP) {
		h.MaxReading, h.ReadWithin, h.SlowAfter = 2, 5*time.Second, 300*time.Millisecond
	})
	signed := interact.Sign(secret, []byte(notOurs), time.Now())
	held := request{h: signed, size: len(notOurs), sent: notOurs[:len(notOurs)-1]}
	_, old := e.send(t, held)
	time.Sleep(400 * time.Millisecond) // the first past SlowAfter
	youngConn, young := e.send(t, held)
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	_, whole := e.send(t, request{h: signed, size: len(notOurs), sent: notOurs})
	if code := answer(whole, 3*time.Second); code != http.StatusOK {
		t.Fatalf("a whole request waiting behind a slow body: %d, want 200", code)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("answered after %s, want at once (the slow body cut off)", took.Round(time.Millisecond))
	}
	if code := answer(old, time.Second); code != http.StatusServiceUnavailable {
		t.Fatalf("the slow body: %d, want 503", code)
	}
	if n := e.shed.Load(); n != 1 {
		t.Errorf("%d shed, want 1", n)
	}
	// The younger one, not past SlowAfter when the cut was made, is still
	// read: its last byte makes it whole.
	if code := answer(young, 100*time.Millisecond); code != -1 {
		t.Fatalf("the younger body was answered %d before it was whole", code)
	}
	if _, err := io.WriteString(youngConn, notOurs[len(notOurs)-1:]); err != nil {
		t.Fatal(err)
	}
	if code := answer(young, 2*time.Second); code != http.StatusOK {
		t.Fatalf("the younger body once whole: %d, want 200", code)
	}
}

// TestChunkedBodyBounded: a chunked body (no length to refuse it by) is
// read up to MaxBody, then answered 413.
func TestChunkedBodyBounded(t *testing.T) {
	e := newEndpoint(t, nil)
	signed := interact.Sign(secret, []byte(notOurs), time.Now())
	c, got := e.send(t, request{h: signed, size: -1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		chunk := strings.Repeat("x", 16<<10)
		for ctx.Err() == nil {
			if _, err := fmt.Fprintf(c, "%x\r\n%s\r\n", len(chunk), chunk); err != nil {
				return
			}
		}
	}()
	if code := answer(got, 3*time.Second); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("an endless chunked body: %d, want 413", code)
	}
}

func TestPrecheckIsVerifysFirstStep(t *testing.T) {
	now := time.Now()
	h := interact.Sign(secret, []byte(notOurs), now)
	if err := interact.Precheck(secret, h, now); err != nil {
		t.Fatalf("a signed request's headers: %v", err)
	}
	h.Set("X-Slack-Signature", "v0="+strings.Repeat("0", 64))
	if err := interact.Precheck(secret, h, now); err != nil {
		t.Fatalf("a well-formed signature is for Verify to judge: %v", err)
	}
	if err := interact.Verify(secret, h, []byte(notOurs), now); !errors.Is(err, interact.ErrUnsigned) {
		t.Fatalf("Verify of a forged signature: %v", err)
	}
}
