//go:build faults

package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/interact"
)

var slackFlood = flag.Duration("slack-flood", 30*time.Second, "how long the Slack endpoint is flooded")

// The flood of TestFaultSlackEndpointFlood.
const (
	floodConns   = 250       // each sending 512 KiB under a bogus signature
	floodBody    = 512 << 10 // what each sends
	trickleConns = 50        // each sending its body 64 bytes every 100 ms
)

// attack is one way a flood connection sends its request.
type attack struct {
	name string
	head string                       // headers after the signature's, ending the header block
	body func(c net.Conn, pad []byte) // sends the body, or as much of it as it can
}

// attacks: the 512 KiB body the server must read to refuse (chunked: no
// length to refuse it by); the same announced with its length; one just
// under MaxBody whose last byte never comes (held until cut off); and a
// body trickling in.
var attacks = []attack{
	{"chunked 512 KiB, never ended", "Transfer-Encoding: chunked\r\n\r\n", func(c net.Conn, pad []byte) {
		for sent := 0; sent < floodBody; sent += len(pad) {
			if _, err := fmt.Fprintf(c, "%x\r\n%s\r\n", len(pad), pad); err != nil {
				return
			}
		}
	}},
	{"512 KiB announced", fmt.Sprintf("Content-Length: %d\r\n\r\n", floodBody), func(c net.Conn, pad []byte) {
		for sent := 0; sent < floodBody; sent += len(pad) {
			if _, err := c.Write(pad); err != nil {
				return
			}
		}
	}},
	{"MaxBody, its last byte held", fmt.Sprintf("Content-Length: %d\r\n\r\n", interact.MaxBody), func(c net.Conn, pad []byte) {
		for left := interact.MaxBody - 1; left > 0; left -= len(pad) {
			if _, err := c.Write(pad[:min(left, len(pad))]); err != nil {
				return
			}
		}
	}},
}

var trickle = attack{"trickling", "Content-Length: 65536\r\n\r\n", func(c net.Conn, pad []byte) {
	for range 1024 {
		if _, err := c.Write(pad[:64]); err != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}}

// flooder sends one attack's requests to addr, one connection after
// another, until ctx ends, and counts how each ended.
type flooder struct {
	mu      sync.Mutex
	answers map[string]int // "413", "closed", …
}

func (f *flooder) count(what string) {
	f.mu.Lock()
	f.answers[what]++
	f.mu.Unlock()
}

func (f *flooder) run(ctx context.Context, addr string, a attack, pad []byte) {
	for ctx.Err() == nil {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			f.count("dial failed")
			time.Sleep(50 * time.Millisecond)
			continue
		}
		stop := context.AfterFunc(ctx, func() { _ = c.Close() })
		sig := make([]byte, 32)
		_, _ = rand.Read(sig)
		head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\n"+
			"X-Slack-Request-Timestamp: %d\r\nX-Slack-Signature: v0=%s\r\n%s", interact.Path, addr, time.Now().Unix(), hex.EncodeToString(sig), a.head)
		if _, err := io.WriteString(c, head); err == nil {
			go a.body(c, pad)
			// Held open: the connection stays until the server answers
			// or closes it.
			if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				f.count(strconv.Itoa(resp.StatusCode))
				_ = resp.Body.Close()
			} else if ctx.Err() == nil {
				f.count("closed unanswered")
			}
		}
		stop()
		_ = c.Close()
	}
}

// TestFaultSlackEndpointFlood: the HTTP mode's Slack endpoint, which
// faces the internet, flooded by 250 connections each sending 512 KiB
// under a bogus (well-formed, fresh) signature and held open, reopened as
// soon as the server ends one, for 30 s, with 50 more trickling their
// bodies in: the daemon's peak RSS grows by less than 40 MiB (the chart's
// pod has 128), requests were shed (the flood filled what the endpoint
// reads at once), and a signed click sent in the middle of it, twice, is
// answered 200 within Slack's 3 s and delivered to kandev.
func TestFaultSlackEndpointFlood(t *testing.T) {
	listen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	e, d := interactiveEnv(t, "    mode: http\n    listen: "+listen+"\n    signing_secret_file: {{.dir}}/signing\n")
	posts := firstPosts(e.slack)
	time.Sleep(2 * time.Second) // past the first cycles' allocations
	pid := d.cmd.Process.Pid
	rss0 := procStatus(t, pid, "VmRSS")
	resetPeak(t, pid)

	ctx, cancel := context.WithTimeout(context.Background(), *slackFlood)
	defer cancel()
	pad := []byte(strings.Repeat("payload=x", 16<<10/9+1))[:16<<10]
	f := &flooder{answers: map[string]int{}}
	var wg sync.WaitGroup
	for i := range floodConns {
		wg.Go(func() { f.run(ctx, listen, attacks[i%len(attacks)], pad) })
	}
	for range trickleConns {
		wg.Go(func() { f.run(ctx, listen, trickle, pad) })
	}

	// Slack's 3 s; the race detector's binary is several times slower.
	within := 3 * time.Second
	if raceBuild {
		within = 10 * time.Second
	}
	var took []time.Duration
	start := time.Now()
	for i, session := range []string{"sess-a", "sess-b"} {
		time.Sleep(time.Until(start.Add(*slackFlood * time.Duration(i+1) / 3)))
		shed := d.metric(t, "watchdogd_slack_requests_shed_total")
		sent := time.Now()
		code := post(t, listen, click(t, posts[session], "U0ALICE", "pgx"), nil)
		took = append(took, time.Since(sent))
		if code != http.StatusOK || took[i] > within {
			t.Errorf("a signed click on %s during the flood: %d after %s, want 200 within %s", session, code, took[i].Round(time.Millisecond), within)
		}
		if d.metric(t, "watchdogd_slack_requests_shed_total") == shed {
			time.Sleep(time.Second)
			if d.metric(t, "watchdogd_slack_requests_shed_total") == shed {
				t.Errorf("nothing shed around the click on %s: the flood did not fill what the endpoint reads at once", session)
			}
		}
	}
	wg.Wait()
	peak, rss1 := procStatus(t, pid, "VmHWM"), procStatus(t, pid, "VmRSS")

	waitFor(t, 20*time.Second, "both clicks answered in kandev", func() bool { return len(e.ws.Responds()) == 2 })
	for _, r := range e.ws.Responds() {
		if !r.Claimed || r.Answers[0].Options[0] != "pgx" {
			t.Fatalf("kandev got %+v, want the click's pgx", r)
		}
	}
	if code, _ := d.get("/livez"); code != http.StatusOK {
		t.Fatalf("/livez after the flood: %d", code)
	}
	growth := peak - rss0
	if growth >= 40 && !raceBuild {
		t.Errorf("the flood grew the peak RSS by %.1f MiB (%.1f → %.1f), want < 40", growth, rss0, peak)
	}
	var answers []string
	requests := 0
	for what, n := range f.answers {
		answers = append(answers, fmt.Sprintf("%s: %d", what, n))
		requests += n
	}
	sort.Strings(answers)
	figure(t, "%d connections sending 512 KiB under a bogus signature and %d trickling, reopened for %s: %d requests (%s), %v shed; "+
		"2 signed clicks answered 200 in %s and %s, both delivered; peak RSS %.1f → %.1f MiB (+%.1f, now %.1f)",
		floodConns, trickleConns, *slackFlood, requests, strings.Join(answers, ", "), d.metric(t, "watchdogd_slack_requests_shed_total"),
		took[0].Round(time.Millisecond), took[1].Round(time.Millisecond), rss0, peak, growth, rss1)
}
