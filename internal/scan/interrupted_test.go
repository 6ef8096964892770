package scan

import (
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// TestInterruptionSaysWhat: an interrupted_session finding says what left
// the session parked, and names a permission kandev can no longer grant.
func TestInterruptionSaysWhat(t *testing.T) {
	m := time.Minute
	cases := []struct {
		name string
		s    model.Session
		want string
		lost bool
	}{
		// kandev set interrupted_at: a restart parked it.
		{"restart", with(session("WAITING_FOR_INPUT", 60*m), both(completed, interruptedAgo(25*m))), InterruptionRestart, false},
		// The same with a permission pending when the turn closed.
		{"restart with a permission", with(session("WAITING_FOR_INPUT", 60*m, permissionReq("perm-1", "pending", 30*m)),
			both(completed, interruptedAgo(25*m))), InterruptionRestart, true},
		// A follow-up prompt that got no reply.
		{"dropped prompt", with(session("WAITING_FOR_INPUT", 30*m, userMessage(30*m)), closedAgo(20*m)), InterruptionDroppedPrompt, false},
		// The agent replied, then asked for a permission, and the turn
		// closed: the prompt was answered; the permission is what was lost.
		{"lost permission", with(session("WAITING_FOR_INPUT", 60*m, userMessage(59*m), aggregate(40*m), permissionReq("perm-1", "pending", 30*m)),
			closedAgo(25*m)), InterruptionLostPermission, true},
	}
	for _, c := range cases {
		rep := Findings(&model.Snapshot{Sessions: []model.Session{c.s}}, Options{Thresholds: DefaultThresholds()}, now)
		if len(rep.Findings) != 1 || rep.Findings[0].Detail == nil {
			t.Errorf("%s: findings %+v", c.name, rep.Findings)
			continue
		}
		d := rep.Findings[0].Detail
		if d.Interruption != c.want || (d.LostPermission != nil) != c.lost {
			t.Errorf("%s: interruption %q, lost permission %+v; want %q, %v", c.name, d.Interruption, d.LostPermission, c.want, c.lost)
		}
	}
}
