package cycle

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/answer"
	"github.com/watchdogd/watchdogd/internal/notify/nudge"
	"github.com/watchdogd/watchdogd/internal/notify/registry"
	"github.com/watchdogd/watchdogd/internal/notify/slack"
	"github.com/watchdogd/watchdogd/internal/notify/snooze"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// TestTwoClicksAtOnceOneActs: Alice and Bob answer one question with
// different options in the same instant — both past the check of who may
// act (their user group asked of Slack) before either is saved. One
// answer is saved; the other is refused, naming who acted first. A click
// on an episode the ledger no longer holds is refused, not an error.
func TestTwoClicksAtOnceOneActs(t *testing.T) {
	c, episode := clickCycle(t)
	ctx := context.Background()
	// Both clicks wait here until both have read the episode.
	var arrived sync.WaitGroup
	arrived.Add(2)
	members := func(context.Context, string) ([]string, error) {
		arrived.Done()
		arrived.Wait()
		return []string{"U0ALICE", "U0BOB"}, nil
	}
	clickBy := func(user, option string) ClickIn {
		return ClickIn{Episode: episode, User: user, Read: func(model.Episode, scan.Finding) (model.Click, string) {
			return model.Click{Button: model.ButtonAnswer, Answers: []model.Answer{{QuestionID: "q1", Options: []string{option}}}}, ""
		}}
	}
	got := make([]Clicked, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, in := range []ClickIn{clickBy("U0ALICE", "pgx"), clickBy("U0BOB", "pq")} {
		wg.Go(func() { got[i], errs[i] = c.Click(ctx, in, members) })
	}
	wg.Wait()
	saved, refused := 0, ""
	for i := range got {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if len(got[i].Keys) > 0 {
			saved++
		} else {
			refused = got[i].Refused
		}
	}
	if saved != 1 || !strings.Contains(refused, "acted on this alert from Slack already") {
		t.Fatalf("%d clicks saved, the other refused %q: want one saved and one refused naming who acted", saved, refused)
	}
	gone, err := c.Click(ctx, ClickIn{Episode: "no-such-episode", User: "U0ALICE"}, members)
	if err != nil || !strings.Contains(gone.Refused, "no such alert") {
		t.Fatalf("a click on an unknown episode: %+v, %v", gone, err)
	}
}

// clickCycle is a cycle whose slack.interactivity admits user group
// S0OPS, after a first cycle posted the question of session s1; and that
// question's episode.
func clickCycle(t *testing.T) (*Cycle, string) {
	t.Helper()
	b := kandevdb.NewBuilder(time.Now())
	s := b.Session("s1", "Pick a driver", "ws", "WAITING_FOR_INPUT", time.Hour, "")
	opts := []kandevdb.QuestionOpt{{ID: "pgx", Label: "pgx"}, {ID: "pq", Label: "lib/pq"}}
	s.Turn("turn-1", 50*time.Minute, -1, "").Clarification("p1", "q1", "Which driver?", "Which SQL driver?", opts, "", 30*time.Minute, nil)
	c, srv, _, _ := testCycleDB(t, b.DS, nil)
	cfg, err := config.Parse("t.yaml", []byte("slack:\n  token_file: /x\n  default_channel: C1\n  api_url: "+srv.APIURL()+
		"\n  interactivity:\n    app_token_file: /x\n    allowed_usergroups: [S0OPS]\n"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	c.Config = cfg
	// The click's outlets: only its story is rendered here, nothing sent.
	registry.RegisterClicks(c.Outlets, c.Outlets[model.ActionSlack].Outlet.(*slack.Outlet), &nudge.Outlet{}, &answer.Outlet{}, &snooze.Outlet{})
	ctx := context.Background()
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	eps, err := c.Store.Episodes(ctx, true, 0)
	if err != nil || len(eps) != 1 {
		t.Fatalf("episodes %+v: %v", eps, err)
	}
	return c, eps[0].ID
}

// TestFormForWhoMayAct: the "Answer…" form shows the question only to who
// may act on the alert; anyone else is refused as a click would be, and
// an episode the ledger does not hold is "no such alert".
func TestFormForWhoMayAct(t *testing.T) {
	c, episode := clickCycle(t)
	members := func(context.Context, string) ([]string, error) { return []string{"U0ALICE"}, nil }
	ctx := context.Background()
	f, refused, err := c.FormFor(ctx, episode, "U0ALICE", members)
	if err != nil || refused != "" || f.Detail == nil || len(f.Detail.Questions) != 1 {
		t.Fatalf("a member: finding %+v, refused %q, %v", f, refused, err)
	}
	if f, refused, err := c.FormFor(ctx, episode, "U0MALLORY", members); err != nil || !strings.Contains(refused, "not allowed") || f.Detail != nil {
		t.Fatalf("an outsider: finding %+v, refused %q, %v", f, refused, err)
	}
	if _, refused, err := c.FormFor(ctx, "no-such-episode", "U0ALICE", members); err != nil || !strings.Contains(refused, "no such alert") {
		t.Fatalf("an unknown episode: refused %q, %v", refused, err)
	}
}
