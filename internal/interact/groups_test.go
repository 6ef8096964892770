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
	"github.com/watchdogd/watchdogd/internal/notify/slack"
)

// TestGroupsAskSlackOnce: 30 clicks by someone outside a group, 10 at
// once, ask Slack for its members once while the list is fresh. Once
// stale it is asked again; Slack then answering 429, the last list still
// admits the group's members, and 20 clicks more within the retry wait ask
// nothing more. A group Slack never listed gets Slack's error, asked again
// only after the retry wait. Each click used to ask Slack, and a 429
// refused the group's own members.
func TestGroupsAskSlackOnce(t *testing.T) {
	var asked atomic.Int32
	var limited atomic.Bool
	now := time.Unix(1_800_000_000, 0)
	var mu sync.Mutex
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	g := &interact.Groups{TTL: time.Minute, Retry: 30 * time.Second,
		Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
		Fetch: func(context.Context, string) ([]string, error) {
			asked.Add(1)
			time.Sleep(20 * time.Millisecond) // concurrent asks overlap
			if limited.Load() {
				return nil, errors.New("slack rate limit exceeded, retry after 30s")
			}
			return []string{"U0CAROL"}, nil
		}}
	ask := func(group string, n int, want []string) {
		t.Helper()
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				m, err := g.Members(context.Background(), group)
				if (want == nil) != (err != nil) || len(m) != len(want) {
					t.Errorf("%s: members %v, %v; want %v", group, m, err, want)
				}
			})
		}
		wg.Wait()
	}
	steps := []struct {
		name    string
		advance time.Duration
		limited bool
		group   string
		clicks  int
		want    []string
		asked   int32 // requests to Slack so far
	}{
		{"fresh: 3 rounds of 10 at once", 0, false, "S0OPS", 30, []string{"U0CAROL"}, 1},
		{"stale, Slack answering 429: the last list", 2 * time.Minute, true, "S0OPS", 1, []string{"U0CAROL"}, 2},
		{"within the retry wait: nothing asked", 10 * time.Second, true, "S0OPS", 20, []string{"U0CAROL"}, 2},
		{"a group never listed: Slack's error", 0, true, "S0NEW", 5, nil, 3},
		{"its retry wait: the error, nothing asked", 10 * time.Second, true, "S0NEW", 5, nil, 3},
		{"past it, Slack back: the list", 30 * time.Second, false, "S0NEW", 5, []string{"U0CAROL"}, 4},
	}
	for _, st := range steps {
		advance(st.advance)
		limited.Store(st.limited)
		for range max(1, st.clicks/10) {
			ask(st.group, min(st.clicks, 10), st.want)
		}
		if n := asked.Load(); n != st.asked {
			t.Fatalf("%s: Slack asked %d times in all, want %d", st.name, n, st.asked)
		}
	}
}

// TestGroupsCallerGivesUp: a click whose own deadline ends while its
// group's members are being asked of Slack fails alone: another click
// waiting on the same request gets the list.
func TestGroupsCallerGivesUp(t *testing.T) {
	release := make(chan struct{})
	g := &interact.Groups{TTL: time.Minute, Retry: time.Minute, Now: time.Now,
		Fetch: func(ctx context.Context, _ string) ([]string, error) {
			select {
			case <-release:
				return []string{"U0CAROL"}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}}
	first, cancel := context.WithCancel(context.Background())
	firstErr := make(chan error, 1)
	go func() { _, err := g.Members(first, "S0OPS"); firstErr <- err }()
	time.Sleep(50 * time.Millisecond) // the first click's request is under way
	second := make(chan []string, 1)
	go func() { m, _ := g.Members(context.Background(), "S0OPS"); second <- m }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	if err := <-firstErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("the click that gave up: %v", err)
	}
	close(release)
	if m := <-second; len(m) != 1 {
		t.Fatalf("the click still waiting: members %v, want the list", m)
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
		if _, err := h.Handle(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	for range 2000 {
		click("U0MALLORY")
	}
	for i := range 100 {
		click(fmt.Sprintf("U%03d", i))
	}
	// The replies started reach Slack (and wait there) in their own time.
	for end := time.Now().Add(10 * time.Second); s.calls.Load() < 64 && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
	}
	time.Sleep(50 * time.Millisecond) // more, if any, would show by now
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
