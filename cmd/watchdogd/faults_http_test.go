//go:build faults

package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

// procStatus reads one "kB" field (VmRSS, VmHWM) of a process's
// /proc/<pid>/status, in MiB.
func procStatus(t *testing.T, pid int, field string) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		var kib float64
		if _, err := fmt.Sscanf(line, field+": %f kB", &kib); err == nil {
			return kib / 1024
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// resetPeak starts the process's VmHWM over from its current RSS (Linux's
// clear_refs 5), so that a peak read later is the peak of what follows.
func resetPeak(t *testing.T, pid int) {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak RSS: %v", err)
	}
}

// openFDs counts a process's open file descriptors.
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// keepAlive opens a connection to addr, makes one GET of path on it and
// leaves it open, idle, as a keep-alive client (or an attacker) does.
func keepAlive(addr, path string) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr); err != nil {
		_ = c.Close()
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_ = c.Close()
		return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

// silent opens a connection to addr and sends nothing on it, as a client
// that never makes its request (or an attacker) does.
func silent(addr, _ string) (net.Conn, error) { return net.DialTimeout("tcp", addr, 10*time.Second) }

// holdConns opens n connections to addr with open, 20 at a time, and
// returns them open; the test closes them at its end.
func holdConns(t *testing.T, addr string, n int, open func(addr, path string) (net.Conn, error)) []net.Conn {
	t.Helper()
	conns := make(chan net.Conn, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for w := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 20 {
				c, err := open(addr, "/livez")
				if err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					continue
				}
				conns <- c
			}
		}()
	}
	wg.Wait()
	close(conns)
	var held []net.Conn
	for c := range conns {
		held = append(held, c)
	}
	t.Cleanup(func() {
		for _, c := range held {
			_ = c.Close()
		}
	})
	if len(failures) > 0 {
		t.Fatalf("%d of %d connections failed, the first: %s", len(failures), n, failures[0])
	}
	return held
}

// TestFaultIdleConnections: 3,000 keep-alive connections, each having made
// one request and then left idle by its client, grow the daemon's peak RSS
// by less than 40 MiB, the daemon keeps no more of them open than its
// bound, and /livez still answers a new connection while the clients hold
// them. So do 3,000 connections that never send a byte (the server would
// wait 10 s for each one's request).
func TestFaultIdleConnections(t *testing.T) {
	for _, c := range []heldCase{
		{"idle", "keep-alive connections left idle after one GET each", keepAlive, 2 * time.Second, 64},
		// Measured within the 10 s the server waits for a request.
		{"silent", "connections that never sent a byte", silent, 500 * time.Millisecond, 256},
	} {
		t.Run(c.test, func(t *testing.T) { heldConnections(t, c) })
	}
}

// heldCase is one case of TestFaultIdleConnections.
type heldCase struct {
	test, name string
	open       func(addr, path string) (net.Conn, error)
	wait       time.Duration // for the daemon to settle with them open
	bound      int           // the most of them the daemon may keep open
}

// heldConnections runs one case of TestFaultIdleConnections on a daemon of
// its own.
func heldConnections(t *testing.T, c heldCase) {
	const conns = 3000
	extra, base := daemonConfig(t, "")
	e := newEnv(t, world(time.Now()), "sqlite", extra)
	d := e.startDaemon(base)
	waitFor(t, 20*time.Second, "/readyz 200", func() bool { code, _ := d.get("/readyz"); return code == 200 })
	time.Sleep(2 * time.Second) // past the first cycles' allocations
	pid := d.cmd.Process.Pid
	rss0, fd0 := procStatus(t, pid, "VmRSS"), openFDs(t, pid)
	resetPeak(t, pid)
	addr := strings.TrimPrefix(base, "http://")
	holdConns(t, addr, conns, c.open)
	time.Sleep(c.wait)
	fds := openFDs(t, pid)
	start := time.Now()
	code, body := d.get("/livez")
	if code != http.StatusOK {
		t.Fatalf("/livez with %d %s: %d %s", conns, c.name, code, body)
	}
	took := time.Since(start)
	// A few descriptors more than the bound: a cycle may hold its
	// database files open.
	if kept := fds - fd0; kept > c.bound+8 {
		t.Errorf("the daemon kept %d of %d %s open, want at most %d", kept, conns, c.name, c.bound)
	}
	peak, rss1 := procStatus(t, pid, "VmHWM"), procStatus(t, pid, "VmRSS")
	growth := peak - rss0
	if growth >= 40 && !raceBuild {
		t.Errorf("%d %s grew the peak RSS by %.1f MiB (%.1f → peak %.1f), want < 40", conns, c.name, growth, rss0, peak)
	}
	figure(t, "%d %s: peak RSS %.1f → %.1f MiB (+%.1f, now %.1f); the daemon kept %d of them open; /livez answered in %s",
		conns, c.name, rss0, peak, growth, rss1, fds-fd0, took.Round(time.Millisecond))
}

// TestFaultFindingsUnderLoad: over 3,200 open episodes, 16 clients
// fetching /api/v1/findings and 16 fetching the status page at once, four
// times over, grow the daemon's peak RSS by less than 40 MiB, rendering
// the page and the API included; every answer is either whole or a quick
// 503 with Retry-After.
func TestFaultFindingsUnderLoad(t *testing.T) {
	const sessions = 3200
	now := time.Now()
	b := kandevdb.NewBuilder(now)
	for i := range sessions {
		s := b.Session(fmt.Sprintf("s%05d", i), fmt.Sprintf("Fix the login redirect, part %d", i), "ws-web", "RUNNING", time.Hour, "")
		s.Turn(fmt.Sprintf("turn-%05d", i), 40*time.Minute, -1, "").Agent("tool_call", 30*time.Minute)
	}
	// One cycle, at start: the requests meet one view, as between two
	// cycles of a schedule of minutes, not the cycles' own allocations.
	extra, base := daemonConfig(t, "")
	extra = strings.Replace(extra, "@every 1s", "@every 1h", 1)
	e := newEnv(t, b.DS, "sqlite", extra)
	// No Slack: each episode's first step is a log line, delivered at once.
	writeConfigText(t, e, strings.Replace(baseConfig, "slack:\n  api_url: {{.slack}}\n  timeout: 1s\n  default_channel: C-alerts\n  max_messages_per_cycle: 100\n  routes:\n    - match: {workspace_id: ws-ops}\n      channel: C-ops\n    - match: {workspace_id: ws-docs}\n      channel: C-docs\n", "", 1))
	d := e.startDaemon(base)
	// Ready once the first cycle's view is out; counted from the metrics,
	// so that the load below meets the view not yet rendered.
	waitFor(t, 120*time.Second, fmt.Sprintf("%d open episodes", sessions), func() bool {
		code, _ := d.get("/readyz")
		return code == http.StatusOK && d.metric(t, `watchdogd_episodes_open{kind="stalled_turn"}`) == sessions
	})
	time.Sleep(2 * time.Second)
	pid := d.cmd.Process.Pid
	rss0 := procStatus(t, pid, "VmRSS")
	resetPeak(t, pid)
	var mu sync.Mutex
	codes := map[int]int{}
	var bad []string
	start := time.Now()
	for range 4 {
		var wg sync.WaitGroup
		for i := range 32 {
			path := "/api/v1/findings"
			if i%2 == 1 {
				path = "/"
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := (&http.Client{Timeout: 60 * time.Second}).Get(base + path)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					bad = append(bad, err.Error())
					return
				}
				defer func() { _ = resp.Body.Close() }()
				var n int64
				buf := make([]byte, 32<<10)
				for {
					k, err := resp.Body.Read(buf)
					n += int64(k)
					if err != nil {
						break
					}
				}
				codes[resp.StatusCode]++
				switch {
				case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "":
					bad = append(bad, path+": 503 without Retry-After")
				case resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable:
					bad = append(bad, fmt.Sprintf("%s: %d", path, resp.StatusCode))
				}
			}()
		}
		wg.Wait()
	}
	took := time.Since(start)
	_, api := d.get("/api/v1/findings")
	_, page := d.get("/")
	if len(bad) > 0 {
		t.Fatalf("%d bad answers, the first: %s", len(bad), bad[0])
	}
	if codes[http.StatusOK] == 0 {
		t.Fatalf("no request answered: %v", codes)
	}
	peak := procStatus(t, pid, "VmHWM")
	growth := peak - rss0
	if growth >= 40 && !raceBuild {
		t.Errorf("128 requests over %d open episodes grew the peak RSS by %.1f MiB (%.1f → %.1f), want < 40", sessions, growth, rss0, peak)
	}
	if code, _ := d.get("/livez"); code != http.StatusOK {
		t.Fatalf("/livez after the load: %d", code)
	}
	figure(t, "%d open episodes (the API's answer %.1f MB, the page's %.0f kB), 4 rounds of 16 API and 16 page requests at once: %d answered 200, %d got 503 with Retry-After, in %s; peak RSS %.1f → %.1f MiB (+%.1f)",
		sessions, float64(len(api))/1e6, float64(len(page))/1e3, codes[http.StatusOK], codes[http.StatusServiceUnavailable], took.Round(time.Millisecond), rss0, peak, growth)
}
