package notify

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// TestQueues: due actions, oldest first, split into lanes in the order of
// each lane's oldest action; an entry's To names its lane (kandev: one for
// every kind that goes there), else the channel; within a lane first
// attempts go before retries, each oldest first.
func TestQueues(t *testing.T) {
	kandev := func(model.Action) string { return "kandev" }
	reg := Registry{
		model.ActionSlack:       {Name: "slack"},
		model.ActionSlackUpdate: {Name: "slack"},
		model.ActionWebhook:     {Name: "webhook"},
		model.ActionNudge:       {Name: "kandev", To: kandev},
		model.ActionAnswer:      {Name: "kandev", To: kandev},
	}
	due := func(key string, kind model.ActionKind, channel string, attempts int, uncertain bool) model.Due {
		return model.Due{Action: model.Action{Key: key, Kind: kind, Channel: channel, Attempts: attempts, Uncertain: uncertain}}
	}
	in := []model.Due{
		due("hook-retry", model.ActionWebhook, "ops", 3, true),
		due("c1-retry", model.ActionSlack, "C1", 1, false),
		due("nudge", model.ActionNudge, "", 0, false),
		due("c1-edit", model.ActionSlackUpdate, "C1", 0, false),
		due("hook-new", model.ActionWebhook, "ops", 0, false),
		due("c2", model.ActionSlack, "C2", 0, false),
		due("answer", model.ActionAnswer, "", 0, false),
		due("c1-landed", model.ActionSlack, "C1", 0, true), // a takeover: it may have landed
		due("c1-new", model.ActionSlack, "C1", 0, false),
		due("hook-same-name-as-channel", model.ActionSlack, "ops", 0, false),
		due("unknown", "pager", "x", 0, false),
	}
	var got []string
	for _, q := range Queues(in, reg) {
		var keys []string
		for _, d := range q.Due {
			keys = append(keys, d.Key)
		}
		got = append(got, fmt.Sprintf("%s/%s: %s", q.Lane.Outlet, q.Lane.Destination, strings.Join(keys, " ")))
	}
	want := []string{
		"webhook/ops: hook-new hook-retry",
		"slack/C1: c1-edit c1-new c1-retry c1-landed",
		"kandev/kandev: nudge answer",
		"slack/C2: c2",
		"slack/ops: hook-same-name-as-channel",
		"pager/x: unknown",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("lanes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestBreaker: a lane's breaker, as a pure function of its hold, what an
// attempt said of the destination, and now. Failing to reach it holds the
// lane for Backoff(failures); a probe that fails holds it longer, keeping
// when it went down; any answer opens it; a 410 closes it for good, and
// nothing but a release reopens that; an attempt that asked nothing
// changes nothing.
func TestBreaker(t *testing.T) {
	base := model.Hold{Outlet: "webhook", Destination: "ops#aa"}
	down := model.Hold{Outlet: "webhook", Destination: "ops#aa", Reason: "timeout", Since: noon.Add(-time.Minute), Until: noon, Failures: 2}
	gone := model.Hold{Outlet: "webhook", Destination: "ops#aa", Reason: "410", Since: noon.Add(-time.Hour)}
	cases := []struct {
		name  string
		h     model.Hold
		reach Reach
		next  model.Hold
		t     Transition
	}{
		{name: "no hold, it answered: nothing to do",
			h: base, reach: Answered, next: base},
		{name: "no hold, nothing asked of it (held, fenced, the cycle ended): nothing to do",
			h: base, reach: Unheard, next: base},
		{name: "no hold, it did not answer: down for the first backoff (5s)",
			h: base, reach: Unreachable,
			next: model.Hold{Outlet: "webhook", Destination: "ops#aa", Reason: "why", Since: noon, Until: noon.Add(5 * time.Second), Failures: 1}, t: LaneDown},
		{name: "held, the probe did not answer: held again, twice as long, since when it went down",
			h: down, reach: Unreachable,
			next: model.Hold{Outlet: "webhook", Destination: "ops#aa", Reason: "why", Since: down.Since, Until: noon.Add(20 * time.Second), Failures: 3}, t: StillDown},
		{name: "held, the probe was answered (whatever it said): up, the hold removed",
			h: down, reach: Answered, next: model.Hold{}, t: LaneUp},
		{name: "held, the probe asked nothing: still held, the next action probes",
			h: down, reach: Unheard, next: down},
		{name: "no hold, 410 Gone: closed for good from now",
			h: base, reach: GoneForGood,
			next: model.Hold{Outlet: "webhook", Destination: "ops#aa", Reason: "why", Since: noon}, t: LaneGone},
		{name: "held, 410 Gone: closed for good, since when it went down",
			h: down, reach: GoneForGood,
			next: model.Hold{Outlet: "webhook", Destination: "ops#aa", Reason: "why", Since: down.Since}, t: LaneGone},
		{name: "gone, and then an answer (a click tried anyway): still gone",
			h: gone, reach: Answered, next: gone},
		{name: "gone, and then a timeout: still gone, never turned into a breaker that reopens by itself",
			h: gone, reach: Unreachable, next: gone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next, tr := Breaker(c.h, c.reach, "why", noon)
			if next != c.next || tr != c.t {
				t.Errorf("Breaker = %+v %q, want %+v %q", next, tr, c.next, c.t)
			}
		})
	}
}

// TestBreakerBackoff: a lane that never answers is held for 5s, 10s, 20s
// … up to 5 minutes, one probe each time.
func TestBreakerBackoff(t *testing.T) {
	h := model.Hold{Outlet: "slack", Destination: "C1"}
	var got []time.Duration
	now := noon
	for range 8 {
		h, _ = Breaker(h, Unreachable, "timeout", now)
		got = append(got, h.Until.Sub(now))
		now = h.Until
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("backoffs %v, want %v", got, want)
	}
}

// TestGateOf: what a lane's hold lets through.
func TestGateOf(t *testing.T) {
	for _, c := range []struct {
		name string
		h    model.Hold
		want Gate
	}{
		{"no hold: open", model.Hold{Outlet: "slack", Destination: "C1"}, Open},
		{"inside the backoff: shut", model.Hold{Since: noon.Add(-time.Second), Until: noon.Add(time.Second)}, Shut},
		{"the backoff has just ended: one probe", model.Hold{Since: noon.Add(-time.Second), Until: noon}, Probe},
		{"gone for good: open here (each action fails unsent, saying so)", model.Hold{Since: noon.Add(-time.Hour)}, Open},
	} {
		if got := GateOf(c.h, noon); got != c.want {
			t.Errorf("%s: GateOf = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestReachOf: what an answer says of its destination. A status, even an
// error, says it is there; a timeout or a refused connection that it is
// not, unless the attempt's own context ended (the cycle's time, not the
// destination's fault); an outlet's own decision, or an error before any
// request, says nothing.
func TestReachOf(t *testing.T) {
	timeout := Error(errors.New("deadline"), Verdict{Retry: true, Uncertain: true, Unreachable: true, Code: "timeout"})
	for _, c := range []struct {
		name   string
		s      Sent
		ctxErr error
		want   Reach
	}{
		{"delivered", Delivered("C1", "1.2"), nil, Answered},
		{"a 503", Error(errors.New("503"), Verdict{Retry: true, Uncertain: true, Code: "503"}), nil, Answered},
		{"a 400, failed for good", Error(errors.New("400"), Verdict{Code: "400"}), nil, Answered},
		{"a 429", Error(errors.New("429"), Verdict{Retry: true, RateLimited: true, Code: "429"}), nil, Answered},
		{"a timeout", timeout, nil, Unreachable},
		{"a timeout as the cycle ended", timeout, errors.New("context deadline exceeded"), Unheard},
		{"refused", Error(errors.New("refused"), Verdict{Retry: true, Unreachable: true, Code: "refused"}), nil, Unreachable},
		{"410", Error(errors.New("410"), Verdict{Gone: true, Code: "410"}), nil, GoneForGood},
		{"not sent: the pacing's wait ran into the cycle's end", Error(ErrNotSent, Verdict{Retry: true, NotSent: true}), nil, Unheard},
		{"the outlet failed it without asking", Failed("webhook ops is not configured any more"), nil, Unheard},
		{"the outlet gave it back to wait", Wait(model.Action{}, noon, "later"), nil, Unheard},
	} {
		if got := ReachOf(c.s, c.ctxErr); got != c.want {
			t.Errorf("%s: ReachOf = %v, want %v", c.name, got, c.want)
		}
	}
}
