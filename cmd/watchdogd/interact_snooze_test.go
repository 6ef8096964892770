package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
)

// TestSlackSnoozeAndResolve: through the real binary, "Snooze 1h" and
// "Resolve" store silences made by who clicked (silence list shows them),
// edit each message once to say so, and the resolved question, which
// kandev still shows, is not paged again: the next cycles open a new
// episode for it whose post the silence holds until the finding clears.
// episodes show lists the clicks.
func TestSlackSnoozeAndResolve(t *testing.T) {
	listen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	// A reminder every 2 s: without the snooze, the wait below would see
	// reminders in the snoozed question's thread.
	e, _ := interactiveEnvOf(t, "    mode: http\n    listen: "+listen+"\n    signing_secret_file: {{.dir}}/signing\n",
		"policy:\n  unanswered_clarification:\n    steps:\n      - {after: 0s, action: slack}\n    repeat_every: 2s\n", []string{"a", "b"})
	posts := firstPosts(e.slack)
	replies := func(ts string) int {
		n := 0
		for _, m := range e.slack.Messages() {
			if m.ThreadTS == ts {
				n++
			}
		}
		return n
	}
	if c1, c2 := post(t, listen, click(t, posts["sess-a"], "U0ALICE", "Snooze 1h"), nil),
		post(t, listen, click(t, posts["sess-b"], "U0ALICE", "Resolve"), nil); c1 != 200 || c2 != 200 {
		t.Fatalf("clicks: %d %d", c1, c2)
	}
	edited := func(ts, text string) bool {
		for _, m := range e.slack.Messages() {
			b, _ := json.Marshal(m.Blocks)
			if m.TS == ts && strings.Contains(string(b), text) {
				return m.Edits == 1
			}
		}
		return false
	}
	waitFor(t, 20*time.Second, "both messages edited", func() bool {
		return edited(posts["sess-a"].TS, `Snoozed by \u003c@U0ALICE\u003e until`) && edited(posts["sess-b"].TS, `Resolved by \u003c@U0ALICE\u003e from Slack`)
	})
	time.Sleep(1500 * time.Millisecond) // a cycle that read the silences before the snooze has ended
	before := replies(posts["sess-a"].TS)
	time.Sleep(5 * time.Second) // cycles that would page the resolved question again, and remind of the snoozed one
	if n := replies(posts["sess-a"].TS); n != before {
		t.Fatalf("the snoozed question was reminded of %d times while snoozed", n-before)
	}
	top := 0
	for _, m := range e.slack.Messages() {
		b, _ := json.Marshal(m.Blocks)
		if m.ThreadTS == "" && strings.Contains(string(b), "sess-b") {
			top++
		}
	}
	if top != 1 {
		t.Fatalf("the resolved question was posted %d times", top)
	}
	// No outlet hears of it again, paced or not: no episode opens for it
	// until it clears.
	var eps []string
	for _, ep := range e.episodes() {
		if ep.SessionID == "sess-b" {
			eps = append(eps, ep.ID+" resolved: "+ep.Resolution)
		}
	}
	if len(eps) != 1 {
		t.Fatalf("episodes of the resolved question: %q, want the one resolved", eps)
	}
	r := watchdogd(t, e.environ(), "silence", "list", "--config", e.cfg)
	if r.code != 0 || strings.Count(r.stdout, "slack:U0ALICE") != 2 {
		t.Fatalf("silence list (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = watchdogd(t, e.environ(), "episodes", "show", "--config", e.cfg, episodeOf(t, e, "sess-a"))
	if r.code != 0 || !strings.Contains(r.stdout, "INTERACTIONS") || !regexp.MustCompile(`U0ALICE\s+snooze: 1h\s+delivered`).MatchString(r.stdout) {
		t.Fatalf("episodes show (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	}
	shadowBoth(t, e, posts, replies)
}

// shadowBoth turns both questions shadowed (a resume's lifecycle turn
// after each, as kandev writes one): the same episodes, another kind. The
// snooze and the resolve still hold them: nothing more is posted, at the
// top or in the snoozed question's thread.
func shadowBoth(t *testing.T, e *env, posts map[string]slacktest.Message, replies func(string) int) {
	t.Helper()
	b := kandevdb.NewBuilder(time.Now())
	for _, id := range []string{"a", "b"} {
		s := b.Session("sess-"+id, "", "ws-ops", "WAITING_FOR_INPUT", time.Hour, "")
		s.Turn("turn-boot-"+id, 49*time.Minute, 49*time.Minute, "").Message("agent", "script_execution", "boot", 49*time.Minute, `{"script_type": "agent_boot", "is_resuming": true}`)
	}
	b.DS.Tasks, b.DS.Sessions = nil, nil
	if err := e.kandev.Write(context.Background(), b.DS); err != nil {
		t.Fatal(err)
	}
	top := func() int {
		n := 0
		for _, m := range e.slack.Messages() {
			if m.ThreadTS == "" {
				n++
			}
		}
		return n
	}
	topBefore, threadBefore := top(), replies(posts["sess-a"].TS)
	waitFor(t, 20*time.Second, "the snoozed question seen shadowed", func() bool {
		for _, ep := range e.episodes() {
			if ep.SessionID == "sess-a" && ep.Kind == model.KindShadowedClarification {
				return true
			}
		}
		return false
	})
	time.Sleep(5 * time.Second) // cycles that would page either question again
	if n, thread := top(), replies(posts["sess-a"].TS); n != topBefore || thread != threadBefore {
		t.Fatalf("once shadowed: %d new posts, %d new replies to the snoozed question", n-topBefore, thread-threadBefore)
	}
}
