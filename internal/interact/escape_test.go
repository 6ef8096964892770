package interact_test

import (
	"context"
	"strings"
	"testing"
	"time"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/cycle"
	"github.com/watchdogd/watchdogd/internal/interact"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/slack"
	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// TestRefusalQuotingAgentTextIsInert: a click on an option the question
// no longer offers is refused with words quoting the button's text, the
// agent's label. Through the handler and the real Slack client, what
// chat.postEphemeral receives shows that label as written and acts on
// none of it: no channel mention, no link, no bold.
func TestRefusalQuotingAgentTextIsInert(t *testing.T) {
	evil := "<!channel> <https://evil.example|Open kandev> *now*"
	was := scan.Finding{Kind: model.KindUnansweredClarification, Detail: &scan.Detail{Questions: []scan.Question{
		{ID: "q1", Options: []scan.Option{{ID: "a", Label: evil}, {ID: "b", Label: "lib/pq"}}}}}}
	now := scan.Finding{Kind: model.KindUnansweredClarification, Detail: &scan.Detail{Questions: []scan.Question{
		{ID: "q1", Options: []scan.Option{{ID: "c", Label: "drop"}, {ID: "b", Label: "lib/pq"}}}}}}
	body := slack.Render(was, slack.RenderOptions{Buttons: true, Episode: "ep1"}).Encode()
	v := buttonShowing(t, body, evil)
	ep := model.Episode{ID: "ep1", Actions: []model.Action{{Kind: model.ActionSlack, State: model.StateDelivered, ResultTS: "1.2", ResultChannel: "C1", Body: body}}}

	srv := slacktest.New("xoxb-t")
	t.Cleanup(srv.Close)
	h := &interact.Handler{Slack: slack.NewClient(config.Secret("xoxb-t"), srv.APIURL(), 5*time.Second), Log: zap.NewNop(),
		Click: func(_ context.Context, in cycle.ClickIn) (cycle.Clicked, error) {
			_, unfit := in.Read(ep, now)
			return cycle.Clicked{Refused: unfit}, nil
		}}
	if _, err := h.Handle(context.Background(), interact.Event{Value: v, User: "U1", Channel: "C1", TS: "1.2"}); err != nil {
		t.Fatal(err)
	}
	h.Wait()
	got := srv.Ephemerals()
	if len(got) != 1 {
		t.Fatalf("ephemerals: %+v, want the one refusal", got)
	}
	text := got[0].Text
	for _, raw := range []string{"<!channel>", "<https://", "|Open kandev>", " *now*"} {
		if strings.Contains(text, raw) {
			t.Errorf("agent markup %q reaches chat.postEphemeral raw: %q", raw, text)
		}
	}
	// The words stay readable: entities for what Slack parses, a zero-width
	// space before a formatting character.
	if !strings.Contains(text, "&lt;!channel&gt; &lt;https://evil.example|Open kandev&gt; \u200b*now\u200b*") ||
		!strings.Contains(text, slack.QuestionChanged) {
		t.Errorf("refusal %q does not show the label as written", text)
	}
}

// buttonShowing is the value of the button of the encoded message body
// whose text is text.
func buttonShowing(t *testing.T, body, text string) slack.ButtonValue {
	t.Helper()
	m, err := slack.DecodeMessage(body)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range m.Blocks.BlockSet {
		a, ok := b.(*slackapi.ActionBlock)
		if !ok {
			continue
		}
		for _, e := range a.Elements.ElementSet {
			if btn, ok := e.(*slackapi.ButtonBlockElement); ok && btn.Text != nil && btn.Text.Text == text {
				v, err := slack.DecodeValue(btn.Value)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
		}
	}
	t.Fatalf("no button showing %q", text)
	return slack.ButtonValue{}
}
