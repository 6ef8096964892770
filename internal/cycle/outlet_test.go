package cycle

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/policy"
)

// pager is an outlet only this test knows: it renders a finding as a page
// and records every attempt. Its first send fails as a timeout would (the
// page may have landed); later ones succeed.
type pager struct {
	mu       sync.Mutex
	attempts []notify.Attempt
	fail     int // sends to fail before one succeeds
}

func (p *pager) Render(r notify.Rendering) (string, error) {
	return "PAGE " + string(r.Finding.Kind) + " on " + r.Finding.SessionID, nil
}

func (p *pager) Send(_ context.Context, at notify.Attempt) notify.Sent {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.attempts = append(p.attempts, at)
	if len(p.attempts) <= p.fail {
		return notify.Error(errors.New("pager: i/o timeout"), notify.Verdict{Retry: true, Uncertain: true, Code: "timeout"})
	}
	return notify.Delivered("", "")
}

const actionPage model.ActionKind = "page"

// TestANewOutletIsOneRegistration: an outlet nobody else knows, registered
// for its own action kind with one line, goes through the whole protocol
// of a real cycle — rendered and frozen when decided, claimed, fenced,
// sent with its key, retried as one that may have landed, settled,
// counted — and is never sent again once delivered. Nothing in scan,
// policy, the ledger or the protocol names it.
func TestANewOutletIsOneRegistration(t *testing.T) {
	c, srv, m, _ := testCycleDB(t, oneStall().DS, nil)
	clock := time.Now()
	c.Now = func() time.Time { return clock }
	p := &pager{fail: 1}
	c.Outlets.Register(actionPage, notify.Entry{Outlet: p, Fenced: true}) // the one line
	pol := c.Config.Policy[model.KindStalledTurn]
	pol.Steps = []model.Step{{Action: actionPage}}
	c.Config.Policy[model.KindStalledTurn] = pol
	ctx := context.Background()

	// The dry run shows it by its kind and frozen text: it has no preview.
	var dry bytes.Buffer
	if err := c.DryRun(ctx, &dry); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dry.String(), "→ page:\n    PAGE stalled_turn on s1") {
		t.Errorf("dry run:\n%s", dry.String())
	}

	// First cycle: the page times out; it may have landed.
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if len(p.attempts) != 1 {
		t.Fatalf("attempts after the first cycle: %d, want 1", len(p.attempts))
	}
	first := p.attempts[0]
	key := first.Action.Key
	switch {
	case key != policy.Key(first.Action.EpisodeID, first.Action.Seq) || !strings.HasPrefix(first.Action.Seq, "step/") || first.Action.Kind != actionPage:
		t.Errorf("sent %s %s (%s), want the first step's page", first.Action.Kind, key, first.Action.Seq)
	case first.Action.Body != "PAGE stalled_turn on s1":
		t.Errorf("sent body %q, want the frozen rendering", first.Action.Body)
	case first.Current == nil || first.Current.TurnID == nil || *first.Current.TurnID != "turn-1":
		t.Errorf("fenced finding %+v, want turn-1's stall", first.Current)
	case first.MayHaveLanded:
		t.Error("a first attempt said it may have landed")
	}

	// Second cycle, after the backoff: retried as an attempt that may have
	// landed (this outlet has no Finder: it is told, and sends with the
	// same key), and delivered.
	clock = clock.Add(time.Minute)
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if len(p.attempts) != 2 || !p.attempts[1].MayHaveLanded || p.attempts[1].Action.Key != key {
		t.Fatalf("attempts %+v, want a second one of %s that may have landed", p.attempts, key)
	}
	a, err := c.Store.Action(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if a.State != model.StateDelivered || a.Attempts != 2 {
		t.Errorf("stored %s after %d attempts, want delivered after 2", a.State, a.Attempts)
	}

	// Later cycles send nothing more: the step is delivered.
	clock = clock.Add(time.Hour)
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if len(p.attempts) != 2 {
		t.Errorf("attempts after delivery: %d, want 2", len(p.attempts))
	}
	for result, want := range map[model.Result]float64{model.ResultRetried: 1, model.ResultDelivered: 1} {
		if got := testutil.ToFloat64(m.Actions.WithLabelValues(string(actionPage), string(result))); got != want {
			t.Errorf("actions_total{action=page,result=%s} = %v, want %v", result, got, want)
		}
	}
	if n := srv.Calls("chat.postMessage"); n != 0 {
		t.Errorf("%d Slack posts, want none: the step pages", n)
	}
}

// TestAnUnregisteredActionFails: an action whose outlet is gone (the
// config changed under a stored action) fails for good, saying so; it is
// not sent elsewhere and not retried forever.
func TestAnUnregisteredActionFails(t *testing.T) {
	c, _, _, _ := testCycleDB(t, oneStall().DS, nil)
	pol := c.Config.Policy[model.KindStalledTurn]
	pol.Steps = []model.Step{{Action: actionPage}}
	c.Config.Policy[model.KindStalledTurn] = pol
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Counts[model.ResultFailed] != 1 {
		t.Fatalf("counts %v, want one failed", res.Counts)
	}
	eps, err := c.Store.Episodes(context.Background(), true, 10)
	if err != nil || len(eps) != 1 {
		t.Fatalf("episodes %+v, %v", eps, err)
	}
	e, err := c.Store.Episode(context.Background(), eps[0].ID)
	if err != nil || len(e.Actions) != 1 {
		t.Fatalf("episode %+v, %v", e, err)
	}
	if a := e.Actions[0]; a.State != model.StateFailed || !strings.Contains(a.Error, "nothing delivers page actions") {
		t.Errorf("stored %s %q", a.State, a.Error)
	}
}
