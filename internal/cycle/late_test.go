package cycle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
)

// TestHeldBackStepSaysSentLate: a first post held by a silence goes out
// when the silence ends, hours after it was written. Its ages are the ones
// written ("stalled 30 min"), so it says it was sent late and from when; a
// post that goes out in the cycle that decides it says nothing of the kind.
func TestHeldBackStepSaysSentLate(t *testing.T) {
	for _, c := range []struct {
		name string
		hold time.Duration // how long the silence holds the post
		late bool
	}{
		{"prompt", 0, false},
		{"held two hours", 2 * time.Hour, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cy, srv, _ := testCycle(t, oneStall().DS, nil)
			written := time.Now()
			cy.Now = func() time.Time { return written }
			ctx := context.Background()
			if c.hold > 0 {
				if err := cy.Store.AddSilence(ctx, ledger.Silence{ID: "sil-1", Matchers: model.Matchers{model.Equal("session_id", "s1")}, CreatedAt: written, Until: written.Add(c.hold)}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := cy.Run(ctx); err != nil {
				t.Fatal(err)
			}
			cy.Now = func() time.Time { return written.Add(c.hold + time.Minute) }
			if _, err := cy.Run(ctx); err != nil {
				t.Fatal(err)
			}
			msgs := srv.Messages()
			if len(msgs) != 1 {
				t.Fatalf("%d messages", len(msgs))
			}
			blocks := blocksText(t, msgs[0])
			if !strings.Contains(blocks, "Agent stalled 30 min on") {
				t.Errorf("the written headline changed: %s", blocks)
			}
			stamp := written.UTC().Format("Jan 2 15:04 UTC")
			marked := strings.Contains(blocks, "Sent late: held back <!date^") && strings.Contains(blocks, "|from "+stamp+">") &&
				strings.HasSuffix(msgs[0].Text, "(as of "+stamp+")")
			if marked != c.late {
				t.Errorf("marked late: %v, want %v\ntext %q\nblocks %s", marked, c.late, msgs[0].Text, blocks)
			}
		})
	}
}
