package slack

import (
	"context"
	"strings"
	"testing"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// TestStalledTurnNamesItsLastOutputAsADate: the time of the last output is
// a Slack date token, which each reader's client shows in the reader's zone
// and relative to the day it is read; a terminal shows the UTC fallback.
func TestStalledTurnNamesItsLastOutputAsADate(t *testing.T) {
	last := time.Date(2026, 11, 30, 20, 41, 5, 0, time.UTC)
	f := scan.Finding{Kind: model.KindStalledTurn, SessionID: "s1", TaskID: "t1", TaskTitle: "Fix login", Link: "http://kandev/t/t1",
		AgeSeconds: 2520, Detail: &scan.Detail{LastActivityAt: strp(last.Format(time.RFC3339Nano)), LastActivityType: "tool_call"}}
	m := Render(f, RenderOptions{Now: last.Add(42 * time.Minute)})
	first := m.Blocks.BlockSet[0].(*slackapi.SectionBlock).Text.Text
	want := "No output <!date^1796071265^since {date_short_pretty} at {time}|since Nov 30 20:41 UTC> (last: tool call)."
	if !strings.Contains(first, want) {
		t.Fatalf("first section %q\nwant it to contain %q", first, want)
	}
	if got := PlainText(m); !strings.Contains(got, "No output since Nov 30 20:41 UTC (last: tool call).") || strings.Contains(got, "<!date") {
		t.Fatalf("terminal text %q", got)
	}
}

// TestSentLate: a step sent long after it was written says so, and from
// when, without touching what was written; each case says where the mark
// goes.
func TestSentLate(t *testing.T) {
	written := time.Date(2026, 11, 30, 22, 30, 0, 0, time.UTC)
	full := make([]slackapi.Block, maxBlocks)
	for i := range full {
		full[i] = section(plain("q"))
	}
	cases := []struct {
		name       string
		m          Message
		wantBlocks int  // blocks after marking
		inFooter   bool // the mark joins the last context line
	}{
		// A first post ends with its context line: the mark joins it, so a
		// message at 50 blocks stays at 50.
		{"first post", Render(question("Fix login", "A or B?", 2), RenderOptions{}), 4, true},
		// A thread reply: headline and context line.
		{"reply", Render(question("Fix login", "A or B?", 2), RenderOptions{Reply: true}), 2, true},
		// A body without a context line (an older renderer's): one is added.
		{"no context line", Message{Text: "x", Blocks: slackapi.Blocks{BlockSet: []slackapi.Block{section(mrkdwn("x"))}}}, 2, false},
		// No room for another block: the body goes as it is, never refused;
		// a fallback text at its limit is cut to keep the "as of".
		{"full", Message{Text: strings.Repeat("x", maxFallback), Blocks: slackapi.Blocks{BlockSet: full}}, maxBlocks, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := c.m.Encode()
			got := SentLate(c.m, written)
			if c.m.Encode() != before {
				t.Fatal("the written message was changed")
			}
			if n := len(got.Blocks.BlockSet); n != c.wantBlocks {
				t.Fatalf("%d blocks, want %d", n, c.wantBlocks)
			}
			if !strings.HasSuffix(got.Text, " (as of Nov 30 22:30 UTC)") || len([]rune(got.Text)) > maxFallback {
				t.Errorf("fallback text %q", got.Text)
			}
			text := PlainText(got)
			if c.name == "full" {
				return
			}
			if !strings.Contains(text, "Sent late: held back from Nov 30 22:30 UTC") {
				t.Errorf("text %q", text)
			}
			last := got.Blocks.BlockSet[len(got.Blocks.BlockSet)-1].(*slackapi.ContextBlock)
			if els := len(last.ContextElements.Elements); c.inFooter != (els == 2) {
				t.Errorf("context line has %d elements", els)
			}
		})
	}
}

// TestSentLateIsAccepted: a marked message at watchdogd's own size limit
// is taken by a server enforcing Block Kit's.
func TestSentLateIsAccepted(t *testing.T) {
	s, srv := testSlack(t)
	m := SentLate(Render(question("Fix login", strings.Repeat("long prompt ", 1700), 30), RenderOptions{}), time.Now())
	if _, err := s.Post(context.Background(), "C1", "", "key-late", m); err != nil {
		t.Fatalf("Slack rejected a late message: %v", err)
	}
	if got := srv.Messages(); len(got) != 1 || len(got[0].Blocks) != len(m.Blocks.BlockSet) {
		t.Fatalf("posted %+v", got)
	}
}
