package nudge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/deliver"
	"github.com/watchdogd/watchdogd/internal/kandevtest"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/nudge"
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
		client, err := nudge.NewClient(k.BaseURL(), "", 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		o := &nudge.Outlet{Kandev: client}
		b := model.ClickBody{Button: model.ButtonSendMessage, User: "U0ALICE", What: "pgx", Text: "Answer to your question: pgx",
			Prints: []string{scan.OptionPrint(pgx, pgx.Options[0])}}
		at := deliver.Attempt{Action: model.Action{Key: "k1", Kind: model.ActionSendMessage, Body: b.Encode()},
			Episode: model.Episode{TaskID: "t1", SessionID: "s1"}, Now: time.Now(),
			Current: &scan.Finding{Kind: model.KindShadowedClarification, Detail: &scan.Detail{Questions: []scan.Question{c.now}}}}
		out := deliver.Settle(at.Action, o.Send(context.Background(), at), at.Now)
		if n := len(k.Messages()); n != c.sent || c.sent == 0 && (out.State != model.StateSuperseded || !strings.Contains(out.Error, "no longer offers “pgx”")) {
			t.Errorf("%s: %d sent, %s %q", c.name, n, out.State, out.Error)
		}
		k.Close()
	}
}
