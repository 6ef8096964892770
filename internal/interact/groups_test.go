package interact_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/cycle"
	"github.com/watchdogd/watchdogd/internal/interact"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/slack"
)

// TestGroupsAskSlackOnce: 30 clicks by someone outside a group, 10 at
// once, ask Slack for its members once while the list is fresh; once
// stale it is asked again, and when Slack then answers 429 the last list
// still admits the group's members, where each click used to ask Slack
// and a 429 refused them.
func TestGroupsAskSlackOnce(t *testing.T) {
	var asked atomic.Int32
	var limited atomic.Bool
	now := time.Unix(1_800_000_000, 0)
	var mu sync.Mutex
	g := &interact.Groups{TTL: time.Minute,
		Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
		Fetch: func(context.Context, string) ([]string, error) {
			asked.Add(1)
			time.Sleep(20 * time.Millisecond) // concurrent asks overlap
			if limited.Load() {
				return nil, errors.New("slack rate limit exceeded, retry after 30s")
			}
			return []string{"U0CAROL"}, nil
		}}
	var wg sync.WaitGroup
	for range 3 {
		for range 10 {
			wg.Go(func() {
				if m, err := g.Members(context.Background(), "S0OPS"); err != nil || len(m) != 1 {
					t.Errorf("members %v, %v", m, err)
				}
			})
		}
		wg.Wait()
	}
	if n := asked.Load(); n != 1 {
		t.Fatalf("Slack asked %d times for 30 clicks within the TTL, want 1", n)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	limited.Store(true)
	if m, err := g.Members(context.Background(), "S0OPS"); err != nil || len(m) != 1 || m[0] != "U0CAROL" {
		t.Fatalf("stale, Slack answering 429: %v, %v; want the last list", m, err)
	}
	if n := asked.Load(); n != 2 {
		t.Fatalf("Slack asked %d times, want 2 (once more when stale)", n)
	}
	if _, err := g.Members(context.Background(), "S0NEW"); err == nil {
		t.Fatal("a group Slack never listed, Slack answering 429: no error")
	}
}

// blockingSlack holds every reply until released, counting them.
type blockingSlack struct {
	said
	release chan struct{}
	calls   atomic.Int32
}

func (b *blockingSlack) Ephemeral(ctx context.Context, ch, user, text string) error {
	b.calls.Add(1)
	<-b.release
	return b.said.Ephemeral(ctx, ch, user, text)
}

// TestRefusalsBounded: 2,000 refused clicks by one person while Slack
// paces the replies leave one reply waiting, not 2,000; refusals to 100
// different people wait at most 64 at once. Once sent, the next refusal
// to the same person is sent again.
func TestRefusalsBounded(t *testing.T) {
	s := &blockingSlack{release: make(chan struct{})}
	h := &interact.Handler{
		Click: func(context.Context, cycle.ClickIn) (cycle.Clicked, error) {
			return cycle.Clicked{Refused: "you are not allowed"}, nil
		},
		Slack: s, Count: func(string) {}, Log: zap.NewNop(),
	}
	h.Start(context.Background())
	click := func(user string) {
		ev := interact.Event{Value: slack.ButtonValue{Episode: "ep1", Button: model.ButtonResolve}, User: user, Channel: "C1"}
		if err := h.Handle(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	for range 2000 {
		click("U0MALLORY")
	}
	for i := range 100 {
		click(fmt.Sprintf("U%03d", i))
	}
	time.Sleep(100 * time.Millisecond) // the replies started are waiting on Slack
	if n := s.calls.Load(); n != 64 {
		t.Fatalf("%d replies waiting, want 64: one to the person clicking in a loop, 63 to others", n)
	}
	close(s.release)
	h.Wait()
	click("U0MALLORY")
	h.Wait()
	got := strings.Count(strings.Join(s.ephemerals, "\n"), "U0MALLORY:")
	if got != 2 {
		t.Fatalf("%d replies to the person clicking in a loop, want 2 (one waiting, one after)", got)
	}
}
