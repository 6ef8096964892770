package answer

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/kandevapi"
)

func ans(q string, opts ...string) model.Answer { return model.Answer{QuestionID: q, Options: opts} }

// TestJudge: what a read of kandev says of an answer that may have been
// sent: our very answer recorded (in any order, text trimmed), another
// one, the bundle still waiting, or nothing to go by.
func TestJudge(t *testing.T) {
	ours := []model.Answer{ans("q1", "a"), {QuestionID: "q2", Text: "soon"}}
	for _, c := range []struct {
		name string
		b    Bundle
		want Judgement
	}{
		{"rows not in the read (the turn moved on)", Bundle{}, Unknown},
		{"still pending", Bundle{Seen: true, Pending: true}, Waiting},
		{"answered, no response in the rows", Bundle{Seen: true}, Unknown},
		{"ours, in another order, text padded", Bundle{Seen: true, Recorded: []model.Answer{{QuestionID: "q2", Text: " soon "}, ans("q1", "a")}}, Ours},
		{"another option", Bundle{Seen: true, Recorded: []model.Answer{ans("q1", "b"), {QuestionID: "q2", Text: "soon"}}}, Theirs},
		{"one question only", Bundle{Seen: true, Recorded: []model.Answer{ans("q1", "a")}}, Theirs},
	} {
		if got := Judge(c.b, ours); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestAfterRespond: how an answer settles from kandev's reply.
func TestAfterRespond(t *testing.T) {
	ours := []model.Answer{ans("q1", "a")}
	for _, c := range []struct {
		name  string
		r     kandevapi.Responded
		err   error
		state model.State // "" for an error verdict
		retry bool
		look  bool
		says  string
	}{
		{"taken", kandevapi.Responded{Claimed: true}, nil, model.StateDelivered, false, false, ""},
		{"not taken, but kandev holds ours (an earlier attempt landed)", kandevapi.Responded{Recorded: ours}, nil, model.StateDelivered, false, false, ""},
		{"someone else's first", kandevapi.Responded{Recorded: []model.Answer{ans("q1", "b")}}, nil, model.StateFailed, false, false, "someone answered in kandev first: b"},
		{"not taken, kandev says no more", kandevapi.Responded{}, nil, model.StateFailed, false, true, "another answer first"},
		{"409: look at the rows", kandevapi.Responded{}, &kandevapi.RespondError{Status: 409, Message: "no longer active"}, model.StateFailed, false, true, "no longer takes an answer"},
		{"404", kandevapi.Responded{}, &kandevapi.RespondError{Status: 404}, model.StateFailed, false, false, "does not know this question"},
		{"400: an answer kandev refuses", kandevapi.Responded{}, &kandevapi.RespondError{Status: 400, Message: "expected 2 answers, got 1"}, "", false, false, "expected 2 answers"},
		{"500: may have landed, retried", kandevapi.Responded{}, &kandevapi.RespondError{Status: 500}, "", true, false, ""},
		{"a dropped connection: retried", kandevapi.Responded{}, errors.New("connection reset"), "", true, false, ""},
	} {
		s, look := AfterRespond(c.r, c.err, ours)
		if look != c.look {
			t.Errorf("%s: look %v", c.name, look)
		}
		switch {
		case c.state != "":
			if s.Outcome == nil || s.Outcome.State != c.state || !strings.Contains(s.Outcome.Error, c.says) {
				t.Errorf("%s: %+v, want %s saying %q", c.name, s.Outcome, c.state, c.says)
			}
		case s.Outcome != nil || s.Verdict.Retry != c.retry || c.retry != s.Verdict.Uncertain || !strings.Contains(s.Err.Error(), c.says):
			t.Errorf("%s: %+v, want an error (retry %v)", c.name, s, c.retry)
		}
	}
}

// TestPermissionStep: permission.respond carries no idempotency key, so an
// answer that may have landed is delivered once kandev's row no longer
// waits, and never sent again while it does: it waits a while, then gives
// up saying so. One that never went out is sent while the row waits.
func TestPermissionStep(t *testing.T) {
	for _, c := range []struct {
		name   string
		p      Permission
		landed bool
		since  time.Duration
		send   bool
		state  model.State
	}{
		{"waiting, never sent: send", Permission{Seen: true, Pending: true}, false, 0, true, ""},
		{"answered in kandev before ours went out", Permission{Seen: true, Status: "approved"}, false, 0, false, model.StateFailed},
		{"gone from the read before ours went out", Permission{}, false, 0, false, model.StateSuperseded},
		{"may have landed, no longer waiting: ours", Permission{Seen: true, Status: "approved"}, true, 0, false, model.StateDelivered},
		{"may have landed, gone from the read: ours", Permission{}, true, 0, false, model.StateDelivered},
		{"may have landed, still waiting: wait, do not resend", Permission{Seen: true, Pending: true}, true, time.Minute, false, model.StatePending},
		{"may have landed, still waiting long after: give up", Permission{Seen: true, Pending: true}, true, PermissionSettle, false, model.StateFailed},
	} {
		s, send := PermissionStep(c.p, c.landed, c.since)
		if send != c.send || !send && (s.Outcome == nil || s.Outcome.State != c.state) {
			t.Errorf("%s: send %v %+v, want send %v or %s", c.name, send, s.Outcome, c.send, c.state)
		}
	}
}

// TestBundleIn: a bundle's rows on the current turn, read as kandev writes
// them: status, the response recorded in each answered row, and the
// options' labels.
func TestBundleIn(t *testing.T) {
	row := func(pending, q, status, response string) model.Message {
		meta := `{"pending_id":"` + pending + `","question_id":"` + q + `","question":{"id":"` + q + `","options":[{"option_id":"b","label":"lib/pq"}]},"status":"` + status + `"` + response + `}`
		return model.Message{Type: "clarification_request", Author: "agent", Meta: authority.ParseMetadataText(authority.SQLite, meta)}
	}
	snap := &model.Snapshot{Sessions: []model.Session{{ID: "s1", Messages: []model.Message{
		row("p1", "q1", "answered", `,"response":{"question_id":"q1","selected_options":["b"]}`),
		row("p2", "q1", "pending", ""),
	}}}}
	b := BundleIn(snap, "s1", "p1")
	if !b.Seen || b.Pending || len(b.Recorded) != 1 || Words(b.Recorded, b.Labels) != "lib/pq" {
		t.Errorf("answered bundle %+v", b)
	}
	if b := BundleIn(snap, "s1", "p2"); !b.Seen || !b.Pending {
		t.Errorf("pending bundle %+v", b)
	}
	if b := BundleIn(snap, "s2", "p1"); b.Seen {
		t.Errorf("another session's %+v", b)
	}
}
