package slack

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/notify/slack/slacktest"
)

// testSlack is a client of a Slack test server that closes with the test.
func testSlack(t *testing.T) (*Client, *slacktest.Server) {
	srv := slacktest.New("xoxb-test")
	t.Cleanup(srv.Close)
	return NewClient("xoxb-test", srv.APIURL(), 5*time.Second), srv
}

// TestPacingNeverLeaves: a post whose channel slot comes after the
// caller's deadline, or whose cycle has ended, fails before any request
// leaves, and says so (NotSent): nothing can have landed.
func TestPacingNeverLeaves(t *testing.T) {
	srv := slacktest.New("xoxb-test")
	defer srv.Close()
	s := NewClient("xoxb-test", srv.APIURL(), time.Second)
	if _, err := s.Post(context.Background(), "C1", "", "k1", Message{Text: "first"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := s.Post(ctx, "C1", "", "k2", Message{Text: "second"}) // next slot in about 1 s
	if v := Classify(err); !v.NotSent || !v.Retry || v.Uncertain {
		t.Errorf("slot past the deadline: verdict %+v (err %v)", v, err)
	}
	ended, stop := context.WithCancel(context.Background())
	stop()
	_, err = s.Post(ended, "C2", "", "k3", Message{Text: "third"})
	if v := Classify(err); !v.NotSent || v.Uncertain {
		t.Errorf("cycle ended: verdict %+v (err %v)", v, err)
	}
	if n := srv.Calls("chat.postMessage"); n != 1 {
		t.Errorf("%d requests, want only the first", n)
	}
}

// TestSlackErrorsClassify: each Slack failure maps to the right verdict.
func TestSlackErrorsClassify(t *testing.T) {
	cases := []struct {
		name  string
		fault slacktest.Fault
		want  Verdict
	}{
		// 429 with Retry-After: retry after exactly that long; nothing landed.
		{"rate limited", slacktest.Fault{Status: 429, RetryAfter: 7}, Verdict{Retry: true, After: 7 * time.Second, RateLimited: true, Code: "429"}},
		// A 5xx may follow a post that landed.
		{"server error", slacktest.Fault{Status: 503}, Verdict{Retry: true, Uncertain: true, Code: "503 Service Unavailable"}},
		// ok:false with a permanent code: give up, keep the code.
		{"invalid auth", slacktest.Fault{SlackError: "invalid_auth"}, Verdict{Code: "invalid_auth"}},
		{"channel not found", slacktest.Fault{SlackError: "channel_not_found"}, Verdict{Code: "channel_not_found"}},
		// The message an edit was for is gone (deleted in Slack): nothing
		// to retry, nothing failed.
		{"message not found", slacktest.Fault{SlackError: "message_not_found"}, Verdict{Gone: true, Code: "message_not_found"}},
		// The message is there but may not be edited: reply instead.
		{"edit window closed", slacktest.Fault{SlackError: "edit_window_closed"}, Verdict{Frozen: true, Code: "edit_window_closed"}},
		{"another app's message", slacktest.Fault{SlackError: "cant_update_message"}, Verdict{Frozen: true, Code: "cant_update_message"}},
		// ok:false with a retryable code.
		{"internal error", slacktest.Fault{SlackError: "internal_error"}, Verdict{Retry: true, Uncertain: true, Code: "internal_error"}},
		{"ratelimited body", slacktest.Fault{SlackError: "ratelimited"}, Verdict{Retry: true, RateLimited: true, After: time.Second, Code: "ratelimited"}},
		// Slower than the client's timeout: the post landed, the answer did not.
		{"timeout", slacktest.Fault{Delay: 700 * time.Millisecond, Record: true}, Verdict{Retry: true, Uncertain: true, Unreachable: true, Code: "timeout"}},
	}
	for _, c := range cases {
		srv := slacktest.New("xoxb-test")
		f := c.fault
		srv.SetFault(func(string, int) slacktest.Fault { return f })
		s := NewClient("xoxb-test", srv.APIURL(), 300*time.Millisecond)
		_, err := s.Post(context.Background(), "C1", "", "k", Message{Text: "hi"})
		srv.Close()
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if got := Classify(err); got != c.want {
			t.Errorf("%s: verdict %+v, want %+v (err %v)", c.name, got, c.want, err)
		}
	}
}

// TestFindSettlesFromEvidence: a post whose answer was lost is found by its
// key in the channel history, and a thread reply in the thread's replies.
func TestFindSettlesFromEvidence(t *testing.T) {
	s, srv := testSlack(t)
	ctx := context.Background()
	start := time.Now()
	parent, err := s.Post(ctx, "C1", "", "k-parent", Message{Text: "first"})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetFault(func(method string, _ int) slacktest.Fault {
		if method == "chat.postMessage" {
			return slacktest.Fault{Status: http.StatusBadGateway, Record: true}
		}
		return slacktest.Fault{}
	})
	if _, err := s.Post(ctx, "C1", parent, "k-reply", Message{Text: "reply"}); err == nil {
		t.Fatal("no error from a 502")
	}
	srv.SetFault(nil)
	if ts, ok, err := s.Find(ctx, "C1", "", "k-parent", start); err != nil || !ok || ts != parent {
		t.Fatalf("find parent: %q %v %v", ts, ok, err)
	}
	if _, ok, err := s.Find(ctx, "C1", parent, "k-reply", start); err != nil || !ok {
		t.Fatalf("find reply: %v %v", ok, err)
	}
	if _, ok, _ := s.Find(ctx, "C1", "", "k-never", start); ok {
		t.Fatal("found a key that was never posted")
	}
	if err := s.Update(ctx, "C1", parent, Message{Text: "cleared"}); err != nil {
		t.Fatal(err)
	}
	if m := srv.Messages()[0]; m.Text != "cleared" || m.Edits != 1 {
		t.Fatalf("update %+v", m)
	}
}

// TestDeletedThreadParent: someone deleted an episode's first message.
// Without replies under it the thread is gone: a later step goes to the
// top of the channel instead of failing, and an interrupted attempt of it
// is found there. With replies the thread stays under a placeholder and
// replies still go into it; only the edit of the first message is refused.
func TestDeletedThreadParent(t *testing.T) {
	s, srv := testSlack(t)
	ctx := context.Background()
	start := time.Now()

	lone, err := s.Post(ctx, "C1", "", "k-lone", Message{Text: "first"})
	if err != nil || !srv.Delete("C1", lone) {
		t.Fatalf("post and delete: %v", err)
	}
	reply, err := s.Post(ctx, "C1", lone, "k-step", Message{Text: "later step"})
	if err != nil {
		t.Fatalf("a step under a deleted first message was not sent: %v", err)
	}
	if got := srv.Messages(); len(got) != 1 || got[0].TS != reply || got[0].ThreadTS != "" {
		t.Fatalf("messages %+v, want the step at the top of the channel", got)
	}
	if ts, found, err := s.Find(ctx, "C1", lone, "k-step", start); err != nil || !found || ts != reply {
		t.Fatalf("Find in the deleted thread: %q %v %v", ts, found, err)
	}

	parent, err := s.Post(ctx, "C1", "", "k-parent", Message{Text: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Post(ctx, "C1", parent, "k-r1", Message{Text: "reply"}); err != nil {
		t.Fatal(err)
	}
	srv.Delete("C1", parent)
	r2, err := s.Post(ctx, "C1", parent, "k-r2", Message{Text: "reply"})
	if err != nil {
		t.Fatal(err)
	}
	if ts, found, err := s.Find(ctx, "C1", parent, "k-r2", start); err != nil || !found || ts != r2 {
		t.Fatalf("Find under a placeholder: %q %v %v", ts, found, err)
	}
	if got := Classify(s.Update(ctx, "C1", parent, Message{Text: "cleared"})); !got.Gone {
		t.Fatalf("edit of a deleted first message: %+v", got)
	}
}
