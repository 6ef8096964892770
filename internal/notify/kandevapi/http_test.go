package kandevapi

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/kandevapi/kandevtest"
)

func ans(q string, opts ...string) model.Answer { return model.Answer{QuestionID: q, Options: opts} }

// TestClientAgainstKandev: the client against kandev's double: the first
// answer is taken; the same answer again is not, and kandev says it holds
// it; a hidden question is refused 409, an answer of the wrong shape 400,
// and a wrong token 401. permission.respond carries request_id, pending_id
// and option_id, and is refused without request_id.
func TestClientAgainstKandev(t *testing.T) {
	ctx := context.Background()
	k := kandevtest.NewWSServer(map[string]string{"s1": "WAITING_FOR_INPUT"})
	defer k.Close()
	k.Token = "kandev_pat_x"
	k.AddBundle("p1", "q1")
	k.AddBundle("p2", "q1")
	k.HideBundle("p2")
	c, err := NewClient(k.BaseURL(), "kandev_pat_x", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ours := []model.Answer{ans("q1", "a")}
	if r, err := c.Respond(ctx, "p1", ours); err != nil || !r.Claimed {
		t.Fatalf("first answer: %+v %v", r, err)
	}
	if r, err := c.Respond(ctx, "p1", ours); err != nil || r.Claimed || !reflect.DeepEqual(r.Recorded, ours) {
		t.Fatalf("the same answer again: %+v %v", r, err)
	}
	var re *RespondError
	if _, err := c.Respond(ctx, "p2", ours); !errors.As(err, &re) || re.Status != 409 {
		t.Fatalf("hidden: %v", err)
	}
	if _, err := c.Respond(ctx, "p1", nil); !errors.As(err, &re) || re.Status != 400 {
		t.Fatalf("no answers: %v", err)
	}
	bad, _ := NewClient(k.BaseURL(), config.Secret("wrong"), 5*time.Second)
	if _, err := bad.Respond(ctx, "p1", ours); !errors.As(err, &re) || re.Status != 401 || Classify(err).Retry {
		t.Fatalf("wrong token: %v", err)
	}
	if n := len(k.Responds()); n != 4 {
		t.Fatalf("%d responds reached kandev, want 4", n)
	}

	k.AddPermission("pp1", "req-1")
	if err := c.RespondPermission(ctx, "t1", "s1", "", "pp1", "allow"); !Refusal(err) {
		t.Fatalf("without request_id: %v", err)
	}
	if err := c.RespondPermission(ctx, "t1", "s1", "req-1", "pp1", "allow"); err != nil {
		t.Fatal(err)
	}
	want := kandevtest.PermissionAnswer{TaskID: "t1", SessionID: "s1", RequestID: "req-1", PendingID: "pp1", OptionID: "allow"}
	if got := k.PermissionAnswers(); len(got) != 1 || got[0] != want {
		t.Fatalf("permission answers %+v", got)
	}
}
