package slack

import (
	"context"
	"testing"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
)

// TestToldRefusalEscapedOnce: a click that did not act is told to who
// clicked in an ephemeral reply quoting the agent's label and kandev's
// error. Both reach Slack inert and escaped once: "&lt;" for "<", never
// "&amp;lt;" (the words as written, not entities shown literally).
func TestToldRefusalEscapedOnce(t *testing.T) {
	c, srv := testSlack(t)
	o := &Outlet{Client: c}
	b := model.ClickBody{Button: model.ButtonAnswer, User: "U1", What: "<!here> a & b", Channel: "C1", TS: "1.2"}
	click := model.Action{Kind: model.ActionAnswer, Body: b.Encode(), Error: "kandev: 409 <https://evil.example|retry>"}
	sent := o.Send(context.Background(), notify.Attempt{Action: model.Action{Kind: model.ActionSlackTell}, Unsent: &click})
	if sent.Outcome == nil || sent.Outcome.State != model.StateDelivered {
		t.Fatalf("tell: %+v", sent)
	}
	got := srv.Ephemerals()
	want := "watchdogd did not answer “&lt;!here&gt; a &amp; b”: kandev: 409 &lt;https://evil.example|retry&gt;"
	if len(got) != 1 || got[0].Text != want {
		t.Fatalf("ephemerals %+v\nwant text %q", got, want)
	}
}
