package notify

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/slacktest"
)

func strp(s string) *string { return &s }

func question(title string, prompt string, options int) scan.Finding {
	q := scan.Question{ID: "q1", Title: title, Prompt: prompt}
	for i := 0; i < options; i++ {
		q.Options = append(q.Options, scan.Option{ID: string(rune('a' + i%26)), Label: strings.Repeat("option ", 20), Description: strings.Repeat("why ", 30)})
	}
	return scan.Finding{Kind: scan.KindUnansweredClarification, SessionID: "s1", TaskID: "t1", TaskTitle: title, WorkspaceID: "ws",
		TurnID: strp("turn"), PendingID: strp("p1"), AgeSeconds: 2100, Link: "http://kandev/t/t1", Detail: &scan.Detail{Questions: []scan.Question{q}}}
}

// TestHostileTextIsInert: agent-written text cannot ping or format. Every
// mrkdwn text and the fallback text (which Slack also parses) carry it
// escaped; plain_text sections carry it literally, which Slack never parses.
func TestHostileTextIsInert(t *testing.T) {
	f := question("<!channel> *urgent* <https://evil|click> & `code`", "<!here> ping @everyone", 2)
	m := Render(f, RenderOptions{})
	var b struct {
		Blocks []struct {
			Text     *struct{ Type, Text string }  `json:"text"`
			Elements []struct{ Type, Text string } `json:"elements"`
		} `json:"blocks"`
	}
	raw, _ := json.Marshal(m)
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatal(err)
	}
	parsed := []string{m.Text}
	plain := 0
	for _, blk := range b.Blocks {
		if blk.Text != nil && blk.Text.Type == "mrkdwn" {
			parsed = append(parsed, blk.Text.Text)
		}
		if blk.Text != nil && blk.Text.Type == "plain_text" {
			plain++
		}
		for _, e := range blk.Elements {
			if e.Type == "mrkdwn" {
				parsed = append(parsed, e.Text)
			}
		}
	}
	for _, s := range parsed {
		for _, bad := range []string{"<!channel>", "<!here>", "<https://evil", "*urgent*", "`code`"} {
			if strings.Contains(s, bad) {
				t.Errorf("parsed text contains %q: %q", bad, s)
			}
		}
	}
	if !strings.Contains(parsed[1], "&lt;!channel&gt;") {
		t.Errorf("the title is not escaped: %q", parsed[1])
	}
	if plain < 2 {
		t.Errorf("question and options are not plain_text: %s", raw)
	}
}

// TestHugeQuestionIsDelivered: 30 options and a 20,000-character prompt are
// truncated to Block Kit's limits and accepted by a server enforcing them.
func TestHugeQuestionIsDelivered(t *testing.T) {
	srv := slacktest.New("xoxb-test")
	defer srv.Close()
	f := question("Pick one", strings.Repeat("long prompt ", 1700), 30)
	f.Detail.Questions = append(f.Detail.Questions, f.Detail.Questions[0], f.Detail.Questions[0])
	for i := 0; i < 40; i++ {
		f.Detail.Questions = append(f.Detail.Questions, scan.Question{ID: "extra", Title: "Another question"})
	}
	m := Render(f, RenderOptions{})
	if n := len(m.Blocks.BlockSet); n > maxBlocks {
		t.Fatalf("%d blocks", n)
	}
	s := NewSlack("xoxb-test", srv.APIURL(), 5*time.Second)
	if _, err := s.Post(context.Background(), "C1", "", "key-1", m); err != nil {
		t.Fatalf("Slack rejected the message: %v", err)
	}
	got := srv.Messages()[0]
	if len(got.Blocks) == 0 || got.Metadata == nil || got.Metadata.EventPayload["key"] != "key-1" {
		t.Fatalf("stored message %+v", got)
	}
	if !strings.Contains(PlainText(m), "…") {
		t.Error("truncation is not visible")
	}
}

func TestRenderResolved(t *testing.T) {
	orig := Render(question("Fix login", "A or B?", 2), RenderOptions{Mention: "<!subteam^S1>"})
	r := RenderResolved(orig, "answered", 48*time.Minute)
	if !strings.HasPrefix(PlainText(r), ":white_check_mark: *Cleared after 48 min:* answered.") {
		t.Fatalf("resolved text %q", PlainText(r))
	}
	if len(r.Blocks.BlockSet) != len(orig.Blocks.BlockSet)+1 {
		t.Fatal("the original evidence is not kept")
	}
}

func TestMinutes(t *testing.T) {
	for d, want := range map[time.Duration]string{42 * time.Minute: "42 min", 70 * time.Minute: "1 h 10 min", 2 * time.Hour: "2 h", 50 * time.Hour: "2 d 2 h", 30 * time.Second: "30 s"} {
		if got := Minutes(d); got != want {
			t.Errorf("Minutes(%v) = %q, want %q", d, got, want)
		}
	}
}
