package nudge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/notify/kandevapi"
	"github.com/watchdogd/watchdogd/internal/notify/kandevapi/kandevtest"
	"github.com/watchdogd/watchdogd/internal/notify/nudge"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// TestSendAsMessageOnlyWhatWasChosen: a hidden question's answer sent as
// a message goes only while the question, as the fence read it right
// before, still offers the option chosen; relabelled, nothing is sent.
func TestSendAsMessageOnlyWhatWasChosen(t *testing.T) {
	pgx := scan.Question{ID: "q1", Options: []scan.Option{{ID: "a", Label: "pgx"}}}
	dropped := scan.Question{ID: "q1", Options: []scan.Option{{ID: "a", Label: "DROP the database"}}}
	for _, c := range []struct {
		name string
		now  scan.Question
		sent int
	}{
		{"the same option", pgx, 1},
		{"the option relabelled", dropped, 0},
	} {
		k := kandevtest.NewWSServer(nil)
		client, err := kandevapi.NewClient(k.BaseURL(), "", 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		o := &nudge.Outlet{Kandev: client}
		b := model.ClickBody{Button: model.ButtonSendMessage, User: "U0ALICE", What: "pgx", Text: "Answer to your question: pgx",
			Prints: []string{scan.OptionPrint(pgx, pgx.Options[0])}}
		at := notify.Attempt{Action: model.Action{Key: "k1", Kind: model.ActionSendMessage, Body: b.Encode()},
			Episode: model.Episode{TaskID: "t1", SessionID: "s1"}, Now: time.Now(),
			Current: &scan.Finding{Kind: model.KindShadowedClarification, Detail: &scan.Detail{Questions: []scan.Question{c.now}}}}
		out := notify.Settle(at.Action, o.Send(context.Background(), at), at.Now)
		if n := len(k.Messages()); n != c.sent || c.sent == 0 && (out.State != model.StateSuperseded || !strings.Contains(out.Error, "no longer offers “pgx”")) {
			t.Errorf("%s: %d sent, %s %q", c.name, n, out.State, out.Error)
		}
		k.Close()
	}
}

// TestCancelSettleBoundsItsReads: once kandev took the cancel, every read
// of kandev waiting for the session to leave RUNNING ends with the settle
// wait, however long the read would hang: the attempt ends within one
// read, the cancel, the settle wait and the nudge, the bound check-config
// holds state.claim_ttl above, and is never cut by its own claim between
// the cancel and the nudge.
func TestCancelSettleBoundsItsReads(t *testing.T) {
	k := kandevtest.NewWSServer(map[string]string{"s1": "RUNNING"})
	defer k.Close()
	client, err := kandevapi.NewClient(k.BaseURL(), "", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	running := &model.Snapshot{Sessions: []model.Session{{ID: "s1", TaskID: "t1", State: "RUNNING", Current: &model.Turn{ID: "turn-1", Open: true}}}}
	reads := 0
	o := &nudge.Outlet{Kandev: client, Settle: time.Second,
		Read: func(ctx context.Context, _ string) (*model.Snapshot, error) {
			if reads++; reads == 1 {
				return running, nil // the fence
			}
			<-ctx.Done() // kandev's database hangs
			return nil, ctx.Err()
		},
		Current: func(*model.Snapshot, model.Episode) *scan.Finding { return &scan.Finding{Kind: model.KindStalledTurn} }}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // the claim, far off
	defer cancel()
	at := notify.Attempt{Action: model.Action{Key: "k1", Kind: model.ActionCancelAndNudge, Body: notify.EncodeText("continue")},
		Episode: model.Episode{TaskID: "t1", SessionID: "s1", TurnID: "turn-1"}, Now: time.Now()}
	start := time.Now()
	s := o.Send(ctx, at)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the attempt took %s with a settle wait of 1s", took)
	}
	if len(k.Cancels()) != 1 || len(k.Messages()) != 0 || !s.MayHaveLanded || s.Err == nil ||
		!strings.Contains(s.Err.Error(), "session still RUNNING 1s after agent.cancel") {
		t.Fatalf("sent %+v (%v), cancels %v", s, s.Err, k.Cancels())
	}
}
