package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestSlackClicksHA: two replicas with leader election on one PostgreSQL
// ledger, each receiving Slack's requests on its own listener. The same
// click sent to both at once (a load balancer's retry landing on the
// other replica) answers kandev once; a click only the standby receives
// is saved there and delivered by the leader. Each message is edited once.
func TestSlackClicksHA(t *testing.T) {
	ledgerURL, err := pg.NewDatabase(context.Background(), "clicks")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, questions(time.Now(), "a", "b"), ledgerURL, "")
	e.ws.AddBundle("p-a", "q-a")
	e.ws.AddBundle("p-b", "q-b")
	block := func(listen string) string {
		return "    mode: http\n    listen: " + listen + "\n    signing_secret_file: {{.dir}}/signing\n"
	}
	listenA, listenB := fmt.Sprintf("127.0.0.1:%d", freePort(t)), fmt.Sprintf("127.0.0.1:%d", freePort(t))
	a := e.startDaemon(interactiveConfig(t, e, block(listenA), haConfig(3*time.Second)))
	cfgA := e.cfg
	e.cfg = filepath.Join(e.dir, "b.yaml")
	b := e.startDaemon(interactiveConfig(t, e, block(listenB), haConfig(3*time.Second)))
	e.cfg = cfgA
	a.waitView(t)
	b.waitView(t) // each has opened the ledger: a click it receives is saved
	waitFor(t, 30*time.Second, "both questions posted", func() bool { return len(firstPosts(e.slack)) == 2 })
	standby := listenB
	waitFor(t, 20*time.Second, "one leader", func() bool {
		la, lb := a.metric(t, "watchdogd_leader"), b.metric(t, "watchdogd_leader")
		if la == 0 {
			standby = listenA
		}
		return la+lb == 1
	})
	posts := firstPosts(e.slack)
	both := click(t, posts["sess-a"], "U0ALICE", "pgx")
	var wg sync.WaitGroup
	for _, l := range []string{listenA, listenB} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c := post(t, l, both, nil); c != 200 {
				t.Errorf("click to %s: %d", l, c)
			}
		}()
	}
	wg.Wait()
	if c := post(t, standby, click(t, posts["sess-b"], "U0ALICE", "lib/pq"), nil); c != 200 {
		t.Fatalf("click to the standby: %d", c)
	}
	waitFor(t, 30*time.Second, "both questions answered and both messages edited", func() bool {
		edited := 0
		for _, m := range e.slack.Messages() {
			if (m.TS == posts["sess-a"].TS || m.TS == posts["sess-b"].TS) && m.Edits > 0 {
				edited++
			}
		}
		return len(e.ws.Responds()) == 2 && edited == 2
	})
	time.Sleep(3 * time.Second) // cycles of both replicas: nothing more goes out
	r := e.ws.Responds()
	if len(r) != 2 || !r[0].Claimed || !r[1].Claimed || r[0].PendingID == r[1].PendingID {
		t.Fatalf("kandev's responds %+v, want one per question", r)
	}
	for _, m := range e.slack.Messages() {
		if m.Edits > 1 {
			t.Fatalf("message %s edited %d times", m.TS, m.Edits)
		}
	}
}
