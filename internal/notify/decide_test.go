package notify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/policy"
)

var noon = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

// TestHeld: whether a paced action waits this cycle, and why. A silence or
// quiet hours come first (they keep the action pending however open the
// channel is); then the channel's gate; then the cycle's budget, the only
// reason that counts as rate limiting.
func TestHeld(t *testing.T) {
	ep := model.Episode{WorkspaceID: "w1", SessionID: "s1", Kind: model.KindStalledTurn}
	silence := func(m model.Match, until time.Time) []policy.Silence {
		return []policy.Silence{{ID: "x", Matchers: model.FromMatch(m), Until: until}}
	}
	quiet := func(start, end int) *model.QuietHours {
		return &model.QuietHours{Timezone: "UTC", Location: time.UTC,
			Start: model.ClockTime{Set: true, Minutes: start}, End: model.ClockTime{Set: true, Minutes: end}}
	}
	cases := []struct {
		name       string
		h          Holding
		held       bool
		why        string
		overBudget bool
	}{
		{name: "an open channel with budget left: sent",
			h: Holding{Sent: 0, Budget: 20}},
		{name: "a silence matching the episode holds it",
			h:    Holding{Silences: silence(model.Match{SessionID: "s1"}, noon.Add(time.Hour)), Budget: 20},
			held: true, why: "silenced until 2026-12-03T13:00:00Z"},
		{name: "a silence of another session does not",
			h: Holding{Silences: silence(model.Match{SessionID: "s2"}, noon.Add(time.Hour)), Budget: 20}},
		{name: "an expired silence does not",
			h: Holding{Silences: silence(model.Match{SessionID: "s1"}, noon), Budget: 20}},
		{name: "quiet hours around noon hold it",
			h:    Holding{Quiet: quiet(11*60, 13*60), Budget: 20},
			held: true, why: "quiet hours"},
		{name: "quiet hours over midnight do not hold it at noon",
			h: Holding{Quiet: quiet(22*60, 7*60), Budget: 20}},
		{name: "a silence wins over a spent budget: not counted as rate limited",
			h:    Holding{Silences: silence(model.Match{Kind: model.KindStalledTurn}, noon.Add(time.Minute)), Sent: 20, Budget: 20},
			held: true, why: "silenced until 2026-12-03T12:01:00Z"},
		{name: "a gate that cannot be read holds it (it may be closed)",
			h:    Holding{GateErr: errors.New("ledger down"), Budget: 20},
			held: true, why: "channel gate unreadable"},
		{name: "a channel closed by Retry-After holds it",
			h:    Holding{Gate: noon.Add(time.Second), Budget: 20},
			held: true, why: "the channel asked to wait (Retry-After)"},
		{name: "a gate that has just opened does not",
			h: Holding{Gate: noon, Budget: 20}},
		{name: "the budget spent holds it, counted as rate limited",
			h:    Holding{Sent: 20, Budget: 20},
			held: true, why: "per-cycle budget spent", overBudget: true},
		{name: "one left in the budget: sent",
			h: Holding{Sent: 19, Budget: 20}},
		{name: "an outlet without a budget is never held by count",
			h: Holding{Sent: 1000}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.h.Episode, c.h.Now = ep, noon
			held, why, over := Held(c.h)
			if held != c.held || why != c.why || over != c.overBudget {
				t.Errorf("Held = %v %q %v, want %v %q %v", held, why, over, c.held, c.why, c.overBudget)
			}
		})
	}
}

// TestSettle: how an attempt settles from what its outlet reported.
func TestSettle(t *testing.T) {
	third := model.Action{Key: "k", Attempts: 3}
	cases := []struct {
		name   string
		a      model.Action
		s      Sent
		want   model.Outcome
		result model.Result
	}{
		{name: "the outlet's own outcome is taken as it is",
			a: third, s: Delivered("C1", "1.2"),
			want:   model.Outcome{State: model.StateDelivered, ResultChannel: "C1", ResultTS: "1.2"},
			result: model.ResultDelivered},
		{name: "an outlet that says superseded",
			a: third, s: Superseded("answered"),
			want:   model.Outcome{State: model.StateSuperseded, Error: "answered"},
			result: model.ResultSuperseded},
		{name: "an error not worth retrying fails for good",
			a: third, s: Error(errors.New("channel_not_found"), Verdict{Code: "channel_not_found"}),
			want:   model.Outcome{State: model.StateFailed, Error: "channel_not_found"},
			result: model.ResultFailed},
		{name: "a retryable error waits its backoff (third attempt: 20s)",
			a: third, s: Error(errors.New("502"), Verdict{Retry: true}),
			want:   model.Outcome{State: model.StatePending, NextAttempt: noon.Add(20 * time.Second), Error: "502"},
			result: model.ResultRetried},
		{name: "a 429 waits exactly what the service said",
			a: third, s: Error(errors.New("ratelimited"), Verdict{Retry: true, RateLimited: true, After: 42 * time.Second}),
			want:   model.Outcome{State: model.StatePending, NextAttempt: noon.Add(42 * time.Second), Error: "ratelimited"},
			result: model.ResultRetried},
		{name: "a 503 with Retry-After waits what it says, and may have landed",
			a: third, s: Error(errors.New("503"), Verdict{Retry: true, Uncertain: true, After: 90 * time.Second}),
			want:   model.Outcome{State: model.StatePending, NextAttempt: noon.Add(90 * time.Second), Error: "503", Uncertain: true},
			result: model.ResultRetried},
		{name: "a 429 without Retry-After backs off",
			a: third, s: Error(errors.New("ratelimited"), Verdict{Retry: true, RateLimited: true}),
			want:   model.Outcome{State: model.StatePending, NextAttempt: noon.Add(20 * time.Second), Error: "ratelimited"},
			result: model.ResultRetried},
		{name: "a timeout may have landed: the next attempt looks first",
			a: third, s: Error(context.DeadlineExceeded, Transport(context.DeadlineExceeded)),
			want:   model.Outcome{State: model.StatePending, NextAttempt: noon.Add(20 * time.Second), Error: "context deadline exceeded", Uncertain: true},
			result: model.ResultRetried},
		{name: "an action already uncertain stays so after a certain error",
			a: model.Action{Attempts: 1, Uncertain: true}, s: Error(errors.New("503"), Verdict{Retry: true}),
			want:   model.Outcome{State: model.StatePending, NextAttempt: noon.Add(5 * time.Second), Error: "503", Uncertain: true},
			result: model.ResultRetried},
		{name: "part of the side effect went out (a cancel before its nudge failed)",
			a: third, s: Sent{Err: errors.New("nudge refused"), Verdict: Verdict{Retry: true}, MayHaveLanded: true},
			want:   model.Outcome{State: model.StatePending, NextAttempt: noon.Add(20 * time.Second), Error: "nudge refused", Uncertain: true},
			result: model.ResultRetried},
		{name: "nothing left before the cycle ended: back untried, due now, attempt refunded",
			a: third, s: Error(fmt.Errorf("wait for a slot: %w", ErrNotSent), Transport(ErrNotSent)),
			want:   model.Outcome{State: model.StatePending, NextAttempt: noon, Error: "wait for a slot: not sent", Refund: true},
			result: model.ResultDeferred},
		{name: "back untried keeps what says an earlier attempt may have landed",
			a: model.Action{Attempts: 2, Uncertain: true}, s: Error(ErrNotSent, Transport(ErrNotSent)),
			want:   model.Outcome{State: model.StatePending, NextAttempt: noon, Error: "not sent", Uncertain: true, Refund: true},
			result: model.ResultDeferred},
		{name: "an error's text is one line, whatever the service sent",
			a: third, s: Error(errors.New("bad\nthing"), Verdict{}),
			want:   model.Outcome{State: model.StateFailed, Error: "bad; thing"},
			result: model.ResultFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Settle(c.a, c.s, noon)
			if got != c.want {
				t.Errorf("Settle =\n %+v, want\n %+v", got, c.want)
			}
			if r := Result(got); r != c.result {
				t.Errorf("Result = %s, want %s", r, c.result)
			}
		})
	}
}

// TestWaitKeepsUncertainty: an outlet that gives an attempt back untried
// (kandev busy) keeps whether an earlier one may have landed.
func TestWaitKeepsUncertainty(t *testing.T) {
	s := Wait(model.Action{Uncertain: true}, noon.Add(time.Minute), "busy")
	want := model.Outcome{State: model.StatePending, NextAttempt: noon.Add(time.Minute), Error: "busy", Uncertain: true, Refund: true}
	if got := Settle(model.Action{}, s, noon); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestTransport: what an error no service answered means.
func TestTransport(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want Verdict
	}{
		{"none", nil, Verdict{}},
		{"before any request left", fmt.Errorf("pace: %w", ErrNotSent), Verdict{Retry: true, NotSent: true, Code: "not_sent"}},
		{"a refused connection: no request left", &net.OpError{Op: "dial", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}, Verdict{Retry: true, Unreachable: true, Code: "refused"}},
		{"a deadline: nothing heard from the destination", fmt.Errorf("post: %w", context.DeadlineExceeded), Verdict{Retry: true, Uncertain: true, Unreachable: true, Code: "timeout"}},
		{"a dial that failed: no destination", &net.OpError{Op: "dial", Err: errors.New("no route to host")}, Verdict{Retry: true, Uncertain: true, Unreachable: true, Code: "timeout"}},
		{"a connection broken after it was made: the destination is there", &net.OpError{Op: "read", Err: errors.New("reset")}, Verdict{Retry: true, Uncertain: true, Code: "timeout"}},
		{"anything else: its fate is unknown", errors.New("unexpected EOF"), Verdict{Retry: true, Uncertain: true, Code: "transport"}},
	}
	for _, c := range cases {
		if got := Transport(c.err); got != c.want {
			t.Errorf("%s: Transport = %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestBackoff: exponential from 5s, capped at five minutes.
func TestBackoff(t *testing.T) {
	for attempt, want := range map[int]time.Duration{
		0: 5 * time.Second, 1: 5 * time.Second, 2: 10 * time.Second, 3: 20 * time.Second,
		6: 160 * time.Second, 7: 5 * time.Minute, 100: 5 * time.Minute,
	} {
		if got := Backoff(attempt); got != want {
			t.Errorf("Backoff(%d) = %s, want %s", attempt, got, want)
		}
	}
}

// TestFences: which attempts re-check their finding before they go.
func TestFences(t *testing.T) {
	step, resolve := model.Action{Seq: "step/0"}, model.Action{Seq: "resolve/webhook/ops"}
	nudge := Entry{Fenced: true}
	hook := Entry{Fenced: true, Keyed: true}
	cases := []struct {
		name   string
		entry  Entry
		a      model.Action
		landed bool
		want   bool
	}{
		{"a first attempt at a fenced outlet", nudge, step, false, true},
		{"a retry that may have landed, no key to dedupe on: fenced (a second nudge would be a new one)", nudge, step, true, true},
		{"a first attempt at a keyed outlet", hook, step, false, true},
		{"a keyed retry that may have landed: completed with its key, not superseded", hook, step, true, false},
		{"a resolve: never (its finding is gone by design)", hook, resolve, false, false},
		{"an unfenced outlet (it fences itself)", Entry{}, step, false, false},
	}
	for _, c := range cases {
		if got := Fences(c.entry, c.a, c.landed); got != c.want {
			t.Errorf("%s: Fences = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestOrphaned: a resolve for a step its outlet never heard of is not sent.
func TestOrphaned(t *testing.T) {
	resolve := model.Action{Seq: "resolve/webhook/ops", Kind: model.ActionWebhook}
	edit := model.Action{Seq: "resolve", Kind: model.ActionSlackUpdate}
	cases := []struct {
		name   string
		a      model.Action
		parent model.Action
		want   bool
	}{
		{"its step delivered: sent", resolve, model.Action{State: model.StateDelivered}, false},
		{"its step still in flight: waits, not orphaned", resolve, model.Action{State: model.StateClaimed}, false},
		{"its step superseded (fenced after the plan): never went out", resolve, model.Action{State: model.StateSuperseded}, true},
		{"its step failed for good at once: never went out", resolve, model.Action{State: model.StateFailed}, true},
		{"its step failed after an attempt that may have landed: sent", resolve, model.Action{State: model.StateFailed, Uncertain: true}, false},
		{"Slack's edit is decided apart", edit, model.Action{State: model.StateSuperseded}, false},
		{"a step, not a resolve", model.Action{Seq: "step/1/0", Kind: model.ActionWebhook}, model.Action{State: model.StateSuperseded}, false},
	}
	for _, c := range cases {
		if got := Orphaned(c.a, c.parent); got != c.want {
			t.Errorf("%s: Orphaned = %v, want %v", c.name, got, c.want)
		}
	}
}
