package kandevapi

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/notify/kandevapi/kandevtest"
	"github.com/watchdogd/watchdogd/internal/testport"
)

// TestKandevNudges runs the client's nudges (message.add, agent.cancel)
// against a server speaking kandev's envelope.
func TestKandevNudges(t *testing.T) {
	srv := kandevtest.NewWSServer(map[string]string{"s-wait": "WAITING_FOR_INPUT", "s-run": "RUNNING"})
	srv.Token = "kandev_pat_secret"
	defer srv.Close()
	ctx := context.Background()
	c, err := NewClient(srv.BaseURL(), "kandev_pat_secret", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	id := ClientMessageID("action-key")
	if id != ClientMessageID("action-key") || len(id) != 36 {
		t.Fatalf("client_message_id %q is not a stable UUID", id)
	}
	// A replayed action creates no second message.
	for i := 0; i < 2; i++ {
		if err := c.AddMessage(ctx, "t1", "s-wait", "please continue", id); err != nil {
			t.Fatal(err)
		}
	}
	if msgs := srv.Messages(); len(msgs) != 1 || msgs[0].ClientMessageID != id {
		t.Fatalf("messages %+v", msgs)
	}
	// kandev refuses message.add while RUNNING: a permanent failure.
	err = c.AddMessage(ctx, "t1", "s-run", "hi", ClientMessageID("other"))
	var re *RequestError
	if !errors.As(err, &re) || re.Code != "VALIDATION_ERROR" || !Refusal(err) || Classify(err).Retry {
		t.Fatalf("RUNNING refusal: %v (verdict %+v)", err, Classify(err))
	}
	// agent.cancel makes it promptable.
	if err := c.Cancel(ctx, "s-run"); err != nil {
		t.Fatal(err)
	}
	if err := c.AddMessage(ctx, "t1", "s-run", "hi", ClientMessageID("other")); err != nil {
		t.Fatal(err)
	}
	// Server-side errors: an internal error retries (and may have followed
	// a partial success), a refusal does not.
	srv.SetFail(func(string) string { return "INTERNAL_ERROR" })
	if err := c.AddMessage(ctx, "t1", "s-wait", "x", "y"); !Classify(err).Retry || !Classify(err).Uncertain || Refusal(err) {
		t.Errorf("internal error verdict %+v", Classify(err))
	}
	srv.SetFail(func(string) string { return "NOT_FOUND" })
	if err := c.AddMessage(ctx, "t1", "s-wait", "x", "y"); Classify(err).Retry || !Refusal(err) {
		t.Errorf("not found verdict %+v", Classify(err))
	}
	// The server closes the connection mid-request: retry (kandev
	// deduplicates the replay).
	srv.SetFail(func(string) string { return "close" })
	if err := c.AddMessage(ctx, "t1", "s-wait", "x", "y"); err == nil || !Classify(err).Retry || !Classify(err).Uncertain {
		t.Errorf("dropped connection: %v %+v", err, Classify(err))
	}
	srv.SetFail(nil)
	// A wrong token is refused permanently.
	bad, _ := NewClient(srv.BaseURL(), "wrong", 5*time.Second)
	if err := bad.Cancel(ctx, "s-wait"); err == nil || Classify(err).Retry {
		t.Errorf("bad token: %v", err)
	}
}

// TestKandevCancelWithNoAgent: kandev answers agent.cancel on a session
// it has no agent process for with an INTERNAL_ERROR that no retry
// changes: a refusal, not retried.
func TestKandevCancelWithNoAgent(t *testing.T) {
	srv := kandevtest.NewWSServer(map[string]string{"s1": "RUNNING", "s2": "RUNNING"})
	defer srv.Close()
	srv.SetNoAgent("s1")
	c, err := NewClient(srv.BaseURL(), "", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Cancel(context.Background(), "s1")
	var re *RequestError
	if !errors.As(err, &re) || re.Code != "INTERNAL_ERROR" || !re.NoAgent() || Classify(err).Retry || Classify(err).Uncertain || !Refusal(err) {
		t.Fatalf("cancel with no agent: %v (verdict %+v)", err, Classify(err))
	}
	// The same words from another action are not this refusal.
	other := &RequestError{Action: "message.add", Code: "INTERNAL_ERROR", Message: re.Message}
	if other.NoAgent() || !other.Retryable() {
		t.Errorf("message.add's internal error taken for a cancel with no agent")
	}
	if err := c.Cancel(context.Background(), "s2"); err != nil {
		t.Fatalf("cancel with an agent: %v", err)
	}
}

// TestKandevDown: connection refused is retryable, and certain: no request
// left, so nothing may have landed.
func TestKandevDown(t *testing.T) {
	port, err := testport.Free() // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	c, _ := NewClient(fmt.Sprintf("http://127.0.0.1:%d", port), "", 2*time.Second)
	err = c.AddMessage(context.Background(), "t", "s", "x", "y")
	if v := Classify(err); err == nil || !v.Retry || v.Uncertain {
		t.Fatalf("connection refused: %v %+v", err, v)
	}
}
