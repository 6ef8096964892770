package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/pgtest"
)

func (e *env) startReplica(name, more string) *daemonProc {
	e.t.Helper()
	extra, base := daemonConfig(e.t, more)
	cfg, oldExtra := e.cfg, e.vars["extra"]
	defer func() { e.cfg, e.vars["extra"] = cfg, oldExtra }()
	e.vars["extra"] = extra
	e.cfg = filepath.Join(e.dir, name+".yaml")
	writeConfigText(e.t, e, baseConfig)
	return e.startDaemon(base)
}

// haConfig turns leader election on with lease ttl.
func haConfig(ttl time.Duration) string {
	return fmt.Sprintf("ha:\n  enabled: true\n  lease_ttl: %s\n", ttl)
}

// startHA starts a first replica with leader election on a fresh
// PostgreSQL ledger (database db), with extra environment if given.
func startHA(t *testing.T, db string, ttl time.Duration, env ...string) (*env, *daemonProc) {
	return startHAThrough(t, db, ttl, 0, env...)
}

// startHAThrough is startHA with the ledger rtt away: every replica
// reaches it through a link adding rtt to each round trip (0: loopback).
func startHAThrough(t *testing.T, db string, ttl, rtt time.Duration, env ...string) (*env, *daemonProc) {
	t.Helper()
	ledgerURL, err := pg.NewDatabase(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if rtt > 0 {
		ledgerURL = pgtest.Through(t, ledgerURL, rtt) // closed after the replicas
	}
	extra, base := daemonConfig(t, haConfig(ttl))
	e := newEnv(t, world(time.Now()), ledgerURL, extra)
	return e, e.startDaemon(base, env...)
}

// TestHA: two replicas on one PostgreSQL ledger with ha.enabled: one leads;
// kill it and the other leads within two lease periods; they never lead at
// the same time; every post goes out once. On loopback, and with the ledger
// in another region, 40 ms away: the lease's renewals, the claims and the
// settles each wait that long, and none of it may double a post or delay
// the takeover past the lease.
func TestHA(t *testing.T) {
	for _, rtt := range []time.Duration{0, 40 * time.Millisecond} {
		t.Run(fmt.Sprintf("rtt=%v", rtt), func(t *testing.T) { testHA(t, rtt) })
	}
}

func testHA(t *testing.T, rtt time.Duration) {
	ttl := 3 * time.Second
	e, a := startHAThrough(t, "ha", ttl, rtt)
	b := e.startReplica("b", haConfig(ttl))
	leaders := func() (int, int) {
		return int(a.metric(t, "watchdogd_leader")), int(b.metric(t, "watchdogd_leader"))
	}
	var leader, standby *daemonProc
	waitFor(t, 20*time.Second, "one leader", func() bool {
		la, lb := leaders()
		switch {
		case la == 1 && lb == 0:
			leader, standby = a, b
		case lb == 1 && la == 0:
			leader, standby = b, a
		default:
			return false
		}
		return true
	})
	// Sample both replicas' leader gauge all along: never both at 1.
	stop := make(chan struct{})
	both := make(chan string, 1)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if la, lb := leaders(); la == 1 && lb == 1 {
				select {
				case both <- time.Now().Format(time.RFC3339Nano):
				default:
				}
			}
		}
	}()
	defer close(stop)
	waitFor(t, 20*time.Second, "posts", func() bool { return len(e.slack.Messages()) == 8 })
	// Both probes: the leader is ready, and so is a standby that sees the
	// lease and can scan.
	waitFor(t, 10*time.Second, "standby ready", func() bool { code, _ := standby.get("/readyz"); return code == 200 })
	if _, body := standby.get("/readyz"); !strings.Contains(body, "standby") {
		t.Fatalf("standby readyz: %s", body)
	}
	// The standby reports the ledger as the leader keeps it.
	open := `watchdogd_episodes_open{kind="stalled_turn"}`
	waitFor(t, 10*time.Second, "the standby's episode gauge", func() bool {
		return standby.metric(t, open) == 1 && leader.metric(t, open) == 1
	})
	killed := time.Now()
	_ = leader.cmd.Process.Signal(syscall.SIGKILL)
	waitFor(t, 2*ttl+2*time.Second, "the standby to lead", func() bool { return standby.metric(t, "watchdogd_leader") == 1 })
	took := time.Since(killed)
	if took > 2*ttl {
		t.Fatalf("the standby took %s to lead (lease_ttl %s)", took, ttl)
	}
	// Leadership intervals from the logs never overlap: the dead leader's
	// ended when it was killed, and the new one's began after its lease
	// lapsed.
	if n := len(logLines(standby.out.String(), "became leader")); n != 1 {
		t.Fatalf("standby became leader %d times", n)
	}
	if took < time.Second {
		t.Fatalf("the standby led %s after the kill: before the old lease could lapse", took)
	}
	time.Sleep(time.Second)
	select {
	case at := <-both:
		t.Fatalf("both replicas reported leading at %s", at)
	default:
	}
	if posts := e.exactlyOnce(); posts != 8 {
		t.Fatalf("%d posts across the failover", posts)
	}
	t.Logf("failover in %s", took.Round(10*time.Millisecond))
}

// TestHALeaderThatCannotScanStepsDown: the replica that takes the lease
// first cannot read kandev (its database URL points at a missing file). It
// gives the lease up after a few failed cycles, the replica whose scans
// work leads and pages, and the failing one stays a standby: a leader that
// acts on nothing must not keep a healthy standby waiting.
func TestHALeaderThatCannotScanStepsDown(t *testing.T) {
	ttl := 30 * time.Second
	e, a := startHA(t, "ha_stepdown", ttl, "WATCHDOGD_DATABASE_URL=sqlite://"+filepath.Join(t.TempDir(), "missing", "kandev.db"))
	waitFor(t, 20*time.Second, "the failing replica to lead first", func() bool { return a.metric(t, "watchdogd_leader") == 1 })
	b := e.startReplica("b", haConfig(ttl))
	// Well before the 30 s lease could lapse: it was given up.
	waitFor(t, 20*time.Second, "the replica whose scans work to lead", func() bool { return b.metric(t, "watchdogd_leader") == 1 })
	waitFor(t, 20*time.Second, "posts", func() bool { return len(e.slack.Messages()) == 8 })
	if a.metric(t, "watchdogd_leader") != 0 {
		t.Fatal("the failing replica still reports leading")
	}
	if n := len(logLines(a.out.String(), "stepping down as leader")); n != 1 {
		t.Fatalf("the failing replica stepped down %d times:\n%s", n, a.out.String())
	}
	if code, body := a.get("/readyz"); code == 200 {
		t.Fatalf("the failing replica is ready: %s", body)
	}
	time.Sleep(3 * time.Second) // it keeps failing, and keeps off the lease
	if a.metric(t, "watchdogd_leader") != 0 || b.metric(t, "watchdogd_leader") != 1 {
		t.Fatal("leadership moved back to the replica that cannot scan")
	}
	if posts := e.exactlyOnce(); posts != 8 {
		t.Fatalf("%d posts", posts)
	}
}

// TestOnceSkipsWithoutLease: with ha.enabled, a --once that cannot get the
// lease skips and exits 0.
func TestOnceSkipsWithoutLease(t *testing.T) {
	e, d := startHA(t, "ha", 30*time.Second)
	waitFor(t, 20*time.Second, "a leader", func() bool { return d.metric(t, "watchdogd_leader") == 1 })
	r := e.once()
	if len(logLines(r.stderr, "another replica holds the leader lease")) != 1 {
		t.Fatalf("--once did not skip:\n%s", r.stderr)
	}
}
