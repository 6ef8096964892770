package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
)

func strp(s string) *string { return &s }

func question(title string, prompt string, options int) scan.Finding {
	q := scan.Question{ID: "q1", Title: title, Prompt: prompt}
	for i := 0; i < options; i++ {
		q.Options = append(q.Options, scan.Option{ID: string(rune('a' + i%26)), Label: strings.Repeat("option ", 20), Description: strings.Repeat("why ", 30)})
	}
	return scan.Finding{Kind: model.KindUnansweredClarification, SessionID: "s1", TaskID: "t1", TaskTitle: title, WorkspaceID: "ws",
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
	s, srv := testSlack(t)
	f := question("Pick one", strings.Repeat("long prompt ", 1700), 30)
	f.Detail.Questions = append(f.Detail.Questions, f.Detail.Questions[0], f.Detail.Questions[0])
	for i := 0; i < 40; i++ {
		f.Detail.Questions = append(f.Detail.Questions, scan.Question{ID: "extra", Title: "Another question"})
	}
	m := Render(f, RenderOptions{})
	if n := len(m.Blocks.BlockSet); n > maxBlocks {
		t.Fatalf("%d blocks", n)
	}
	if _, err := s.Post(context.Background(), "C1", "", "key-1", m); err != nil {
		t.Fatalf("Slack rejected the message: %v", err)
	}
	got := srv.Messages()[0]
	if len(got.Blocks) == 0 || got.Metadata == nil || got.Metadata.EventPayload["key"] != "key-1" {
		t.Fatalf("stored message %+v", got)
	}
	if !strings.Contains(PlainText(m), "more not shown") {
		t.Error("truncation is not visible")
	}
	// The resolve edit adds a line on top of all that, and is accepted too.
	if err := s.Update(context.Background(), "C1", got.TS, RenderResolved(m, "answered", time.Hour)); err != nil {
		t.Fatalf("Slack rejected the resolve: %v", err)
	}
}

// TestFit: evidence sections stay within the text budget and the block
// count, and whatever is left out is announced.
func TestFit(t *testing.T) {
	long := strings.Repeat("x", 5000)
	notice := moreNotShown
	cases := []struct {
		name          string
		texts         []string
		budget, limit int
		untold        int
		want          []int // runes per section; -1 marks the notice
	}{
		// Everything fits: no notice.
		{"fits", []string{"ab", "cde"}, 1000, 10, 0, []int{2, 3}},
		// A section is clipped to Slack's 3,000 characters, not dropped.
		{"one long section", []string{long}, 8000, 10, 0, []int{3000}},
		// The budget runs out in the second text: it is clipped to what is
		// left (after room for the notice), and the notice follows.
		{"budget clips", []string{long, long, "z"}, 4000 + len([]rune(notice)), 10, 0, []int{3000, 1000, -1}},
		// What is left is too little to be worth a clipped section.
		{"budget nearly spent", []string{long, long}, 3100 + len([]rune(notice)), 10, 0, []int{3000, -1}},
		// The block limit: the last slot is the notice when more follows…
		{"block limit", []string{"a", "b", "c", "d"}, 1000, 3, 0, []int{1, 1, -1}},
		// …and the last text when nothing does.
		{"block limit exact", []string{"a", "b", "c"}, 1000, 3, 0, []int{1, 1, 1}},
		// Questions that were never rendered are announced.
		{"untold questions", []string{"a"}, 1000, 10, 5, []int{1, -1}},
	}
	for _, c := range cases {
		got := fit(c.texts, c.budget, c.limit, c.untold)
		var sizes []int
		total := 0
		for _, b := range got {
			text := b.(*slackapi.SectionBlock).Text.Text
			total += len([]rune(text))
			if text == notice {
				sizes = append(sizes, -1)
				continue
			}
			sizes = append(sizes, len([]rune(text)))
		}
		if fmt.Sprint(sizes) != fmt.Sprint(c.want) {
			t.Errorf("%s: sections %v, want %v", c.name, sizes, c.want)
		}
		if total > c.budget || len(got) > c.limit {
			t.Errorf("%s: %d characters in %d blocks, over %d / %d", c.name, total, len(got), c.budget, c.limit)
		}
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

// TestWithinLimits: a body frozen in the ledger by an older renderer, with
// more text than Slack takes, is cut at the edge and accepted rather than
// refused for good; a body within the limits goes out unchanged.
func TestWithinLimits(t *testing.T) {
	s, srv := testSlack(t)
	blocks := []slackapi.Block{section(mrkdwn("headline"))}
	for i := 0; i < 10; i++ {
		blocks = append(blocks, section(plain(strings.Repeat("q", 3000))))
	}
	old := Message{Text: "headline", Blocks: slackapi.Blocks{BlockSet: blocks}}
	if _, err := s.Post(context.Background(), "C1", "", "key-old", old); err != nil {
		t.Fatalf("Slack rejected an old body: %v", err)
	}
	if got := srv.Messages()[0]; len(got.Blocks) != 4 || !strings.Contains(PlainText(WithinLimits(old)), "more not shown") {
		t.Fatalf("cut to %d blocks", len(got.Blocks))
	}
	m := Render(question("Fix login", strings.Repeat("long prompt ", 1700), 30), RenderOptions{})
	if a, b := m.Encode(), WithinLimits(m).Encode(); a != b {
		t.Fatal("a rendered message was changed at the edge")
	}
	r := RenderResolved(m, "answered", time.Hour)
	if a, b := r.Encode(), WithinLimits(r).Encode(); a != b {
		t.Fatal("a resolve of a rendered message was changed at the edge")
	}
}

// TestInterruptedSessionSaysWhatWasLost: a session parked by a restart, a
// follow-up prompt a restart dropped, and a permission kandev still shows
// on the closed turn each say what happened and what to do.
func TestInterruptedSessionSaysWhatWasLost(t *testing.T) {
	base := scan.Finding{Kind: model.KindInterruptedSession, SessionID: "s1", TaskID: "t1", TaskTitle: "Fix login", AgeSeconds: 1500, Link: "http://kandev/t/t1"}
	lost := &scan.LostPermission{PendingID: "perm-1", Permission: "run rm -rf build/?"}
	cases := []struct {
		name   string
		detail *scan.Detail
		want   []string
		not    []string
	}{
		// A restart parked it (interrupted_at).
		{"restart", &scan.Detail{Interruption: scan.InterruptionRestart},
			[]string{"Session parked by a kandev restart 25 min ago", "Open it to resume."}, []string{"permission", "never answered"}},
		// A restart dropped a follow-up prompt: the message was never answered.
		{"dropped prompt", &scan.Detail{Interruption: scan.InterruptionDroppedPrompt},
			[]string{"Last message never answered", "closed the turn 25 min ago without a reply", "send the message again"}, []string{"permission"}},
		// A permission pending at the restart can no longer be granted.
		{"restart with a lost permission", &scan.Detail{Interruption: scan.InterruptionRestart, LostPermission: lost},
			[]string{"Session parked by a kandev restart", "can no longer be granted", "must be resumed", "Permission asked before: run rm -rf build/?"}, nil},
		// A permission the agent waited for when the turn closed.
		{"lost permission", &scan.Detail{Interruption: scan.InterruptionLostPermission, LostPermission: lost},
			[]string{"Permission request lost on", "closed the turn 25 min ago while the agent waited for a permission", "can no longer be granted",
				"Permission asked before: run rm -rf build/?"}, []string{"never answered"}},
		// A restart abandoned the turn while the agent worked.
		{"abandoned", &scan.Detail{Interruption: scan.InterruptionAbandoned},
			[]string{"Turn abandoned on", "kandev closed the turn 25 min ago without the agent finishing it (a kandev restart?)", "No agent has replied since"},
			[]string{"permission", "answered"}},
		// The permission the restart lost: a grant failed, kandev marked it
		// expired; the session is still dead.
		{"lost permission, expired", &scan.Detail{Interruption: scan.InterruptionLostPermission,
			LostPermission: &scan.LostPermission{PendingID: "perm-1", Permission: "run rm -rf build/?", Status: "expired"}},
			[]string{"Permission request lost on", "closed the turn 25 min ago", "marked the request expired", "still dead"}, []string{"still shows"}},
		// A question answered after the restart: the wait counts from the
		// answer; the restart is dated by its own instant.
		{"answered after the restart", &scan.Detail{Interruption: scan.InterruptionAbandoned, RestartAt: ptrTo("2026-11-29T11:00:00Z"),
			AnsweredAt: ptrTo("2026-11-29T11:35:00Z")},
			[]string{"Turn abandoned on", `kandev closed the turn \u003c!date^1795950000^on`, "answered 25 min ago", "no agent has picked the session up since"},
			[]string{"closed the turn 25 min ago"}},
		// A finding stored by an older watchdogd has no detail: a restart.
		{"no detail", nil, []string{"Session parked by a kandev restart 25 min ago"}, nil},
	}
	for _, c := range cases {
		f := base
		f.Detail = c.detail
		raw, _ := json.Marshal(Render(f, RenderOptions{}))
		for _, w := range c.want {
			if !strings.Contains(string(raw), w) {
				t.Errorf("%s: message lacks %q: %s", c.name, w, raw)
			}
		}
		for _, w := range c.not {
			if strings.Contains(string(raw), w) {
				t.Errorf("%s: message says %q: %s", c.name, w, raw)
			}
		}
	}
}

// TestTitleLabel: a task is named by its title on one line, or by its id
// when the title is blank, in the Slack link and in the fallback text.
func TestTitleLabel(t *testing.T) {
	cases := []struct{ title, want string }{
		{"Fix login", "Fix login"},
		{"  Fix\n login\t redirect ", "Fix login redirect"}, // a line break would end Slack's <url|label>
		{"", "task t1"},                                     // an empty label is an invisible link
		{" \n", "task t1"},                                  // blank is empty
	}
	for _, c := range cases {
		if got := term.TitleLabel(c.title, "t1"); got != c.want {
			t.Errorf("TitleLabel(%q) = %q, want %q", c.title, got, c.want)
		}
		f := scan.Finding{Kind: "stalled_turn", SessionID: "s1", TaskID: "t1", TaskTitle: c.title, Link: "http://kandev/t/t1", AgeSeconds: 1800}
		m := Render(f, RenderOptions{})
		first := m.Blocks.BlockSet[0].(*slackapi.SectionBlock).Text.Text
		if !strings.Contains(first, "<http://kandev/t/t1|"+c.want+">") || !strings.HasSuffix(m.Text, c.want) {
			t.Errorf("title %q: first line %q, text %q", c.title, first, m.Text)
		}
	}
}

// TestEveryKindHasWords: a kind added to model.Kinds fails here until
// Slack's message has an emoji and a headline for it.
func TestEveryKindHasWords(t *testing.T) {
	for _, k := range model.Kinds {
		if _, ok := emojis[k]; !ok {
			t.Errorf("%s has no emoji", k)
		}
		head, _ := headline(scan.Finding{Kind: k})
		if head == escapeText(string(k))+" on" {
			t.Errorf("%s has no headline: %q", k, head)
		}
	}
}

func ptrTo(s string) *string { return &s }
