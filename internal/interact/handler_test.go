package interact_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/cycle"
	"github.com/watchdogd/watchdogd/internal/interact"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/slack"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// said records what the handler says to Slack.
type said struct {
	mu         sync.Mutex
	ephemerals []string
	forms      int
}

func (s *said) Ephemeral(_ context.Context, _, user, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ephemerals = append(s.ephemerals, user+": "+text)
	return nil
}

func (s *said) OpenForm(_ context.Context, trigger string, _ slackapi.ModalViewRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if trigger == "" {
		return errors.New("invalid_trigger_id")
	}
	s.forms++
	return nil
}

// TestHandle: a click saved is delivered after the acknowledgement; a
// refused one is told to who clicked and counted; one that could not be
// saved is an error, and the person is told to click again (Slack does not
// send a click again by itself); "Answer…" opens a form.
func TestHandle(t *testing.T) {
	cases := []struct {
		name    string
		ev      interact.Event
		clicked cycle.Clicked
		err     error
		// what follows: the keys delivered, the ephemeral said, the forms
		// opened, the result counted, and whether Handle fails.
		delivered, ephemeral string
		forms                int
		result               string
		fails                bool
		// what the form's check says (cycle.FormFor): a refusal, or the
		// ledger's error, which names the ledger and is never shown.
		formRefused string
		formErr     error
	}{
		{"saved", interact.Event{Value: slack.ButtonValue{Episode: "ep1", Button: model.ButtonResolve}, User: "U1"},
			cycle.Clicked{Keys: []string{"k1", "k2"}}, nil, "k1,k2", "", 0, "accepted", false, "", nil},
		{"refused", interact.Event{Value: slack.ButtonValue{Episode: "ep1", Button: model.ButtonResolve}, User: "U2"},
			cycle.Clicked{Refused: "you are not allowed"}, nil, "", "U2: watchdogd did nothing: you are not allowed", 0, "refused", false, "", nil},
		{"not saved", interact.Event{Value: slack.ButtonValue{Episode: "ep1", Button: model.ButtonResolve}, User: "U1"},
			cycle.Clicked{}, errors.New("ledger down"), "", "U1: watchdogd could not record your click (its ledger is unavailable), so nothing was done: click again in a minute", 0, "failed", true, "", nil},
		{"form", interact.Event{Value: slack.ButtonValue{Episode: "ep1", Button: model.ButtonForm}, User: "U1", TriggerID: "tr"},
			cycle.Clicked{}, nil, "", "", 1, "accepted", false, "", nil},
		{"form without trigger", interact.Event{Value: slack.ButtonValue{Episode: "ep1", Button: model.ButtonForm}, User: "U1"},
			cycle.Clicked{}, nil, "", "U1: watchdogd could not open the form: invalid_trigger_id", 0, "failed", false, "", nil},
		// Someone not allowed does not see the question in a form.
		{"form by an outsider", interact.Event{Value: slack.ButtonValue{Episode: "ep1", Button: model.ButtonForm}, User: "U9", TriggerID: "tr"},
			cycle.Clicked{}, nil, "", "U9: watchdogd did nothing: you are not allowed", 0, "refused", false, "you are not allowed", nil},
		{"form, ledger down", interact.Event{Value: slack.ButtonValue{Episode: "ep1", Button: model.ButtonForm}, User: "U1", TriggerID: "tr"},
			cycle.Clicked{}, nil, "", "U1: watchdogd could not open the form (its ledger is unavailable): click again in a minute", 0, "failed", false,
			"", errors.New("ledger sqlite:///var/lib/watchdogd/state.db: read episode ep1: sql: no rows in result set")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &said{}
			var delivered []string
			counted := map[string]int{}
			h := &interact.Handler{
				Click:   func(context.Context, cycle.ClickIn) (cycle.Clicked, error) { return c.clicked, c.err },
				Deliver: func(_ context.Context, keys []string) { delivered = keys },
				Form: func(context.Context, string, string) (scan.Finding, string, error) {
					return scan.Finding{}, c.formRefused, c.formErr
				},
				Slack: s, Count: func(r string) { counted[r]++ }, Log: zap.NewNop(),
			}
			h.Start(context.Background())
			_, err := h.Handle(context.Background(), c.ev)
			h.Wait()
			if (err != nil) != c.fails || strings.Join(delivered, ",") != c.delivered || strings.Join(s.ephemerals, "|") != c.ephemeral ||
				s.forms != c.forms || counted[c.result] != 1 || len(counted) != 1 {
				t.Fatalf("err %v, delivered %v, ephemerals %q, forms %d, counted %v", err, delivered, s.ephemerals, s.forms, counted)
			}
		})
	}
}

// TestFormSentBackToMend: a form submitted with a question left blank is
// answered with Slack's "errors" on that question's field, which keeps the
// form open with what was typed; nothing is saved, no one is told apart.
// Filled in, it is saved.
func TestFormSentBackToMend(t *testing.T) {
	f := scan.Finding{Kind: model.KindUnansweredClarification, Detail: &scan.Detail{Questions: []scan.Question{
		{ID: "q1", Options: []scan.Option{{ID: "cookie", Label: "Cookie"}}}, {ID: "q2", Title: "How long?"}}}}
	view := slack.Form(f, slack.ButtonValue{Episode: "ep1", Button: model.ButtonForm}, "C1", "1.2")
	meta, err := slack.DecodeFormMeta(view.PrivateMetadata)
	if err != nil {
		t.Fatal(err)
	}
	cookie := scan.OptionPrint(f.Detail.Questions[0], f.Detail.Questions[0].Options[0])
	chosen := map[string]map[string]slackapi.BlockAction{"q0": {"choice": {SelectedOption: slackapi.OptionBlockObject{Value: cookie}}}}
	for _, c := range []struct {
		name  string
		state map[string]map[string]slackapi.BlockAction
		mend  string // the field marked, "" when saved
	}{
		{"the second question blank", chosen, "t1"},
		{"both answered", map[string]map[string]slackapi.BlockAction{"q0": chosen["q0"], "t1": {"text": {Value: "One day"}}}, ""},
	} {
		s := &said{}
		saved := 0
		h := &interact.Handler{
			Click: func(_ context.Context, in cycle.ClickIn) (cycle.Clicked, error) { // as cycle.Click reads it
				if _, unfit := in.Read(model.Episode{ID: "ep1"}, f); unfit != "" {
					return cycle.Clicked{Refused: unfit}, nil
				}
				saved++
				return cycle.Clicked{Keys: []string{"k1"}}, nil
			},
			Deliver: func(context.Context, []string) {}, Slack: s, Count: func(string) {}, Log: zap.NewNop(),
		}
		ev := interact.Event{Value: meta.Value, User: "U1", Channel: "C1", TS: "1.2", Form: c.state, Questions: meta.Questions}
		reply, err := h.Handle(context.Background(), ev)
		h.Wait()
		switch {
		case err != nil || len(s.ephemerals) != 0:
			t.Errorf("%s: %v, told %q", c.name, err, s.ephemerals)
		case c.mend == "" && (reply != nil || saved != 1):
			t.Errorf("%s: reply %+v, saved %d", c.name, reply, saved)
		case c.mend != "" && (reply == nil || reply.ResponseAction != "errors" || len(reply.Errors) != 1 || reply.Errors[c.mend] == "" || saved != 0):
			t.Errorf("%s: reply %+v, saved %d; want errors on %s", c.name, reply, saved, c.mend)
		}
	}
}
