package slack

import (
	"context"
	"testing"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// TestToldRefusalEscapedOnce: a click that did not act is told to who
// clicked in an ephemeral reply quoting the agent's label and kandev's or
// watchdogd's reason. Both reach Slack inert and escaped once: "&lt;" for
// "<", never "&amp;lt;" (the words as written, not entities shown
// literally). The second case is the refusal of an option the question no
// longer offers, whose reason quotes the agent's label again.
func TestToldRefusalEscapedOnce(t *testing.T) {
	evil := "<!here> a & b"
	gone := model.ClickBody{Button: model.ButtonAnswer, What: evil, Prints: []string{"q|q1|a"}}
	for _, c := range []struct {
		name, reason, want string
	}{
		{"kandev refused", "kandev: 409 <https://evil.example|retry>",
			"watchdogd did not answer “&lt;!here&gt; a &amp; b”: kandev: 409 &lt;https://evil.example|retry&gt;"},
		{"no longer offered", policy.NoLongerOffered(&scan.Finding{Detail: &scan.Detail{}}, gone),
			"watchdogd did not answer “&lt;!here&gt; a &amp; b”: the question changed in kandev since the click: it no longer offers “&lt;!here&gt; a &amp; b”, so nothing was sent; answer in kandev"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c1, srv := testSlack(t)
			o := &Outlet{Client: c1}
			b := model.ClickBody{Button: model.ButtonAnswer, User: "U1", What: evil, Channel: "C1", TS: "1.2"}
			click := model.Action{Kind: model.ActionAnswer, Body: b.Encode(), Error: c.reason}
			sent := o.Send(context.Background(), notify.Attempt{Action: model.Action{Kind: model.ActionSlackTell}, Unsent: &click})
			if sent.Outcome == nil || sent.Outcome.State != model.StateDelivered {
				t.Fatalf("tell: %+v", sent)
			}
			got := srv.Ephemerals()
			if len(got) != 1 || got[0].Text != c.want {
				t.Fatalf("ephemerals %+v\nwant text %q", got, c.want)
			}
		})
	}
}
