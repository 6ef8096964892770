package registry

import (
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/notify/answer"
	"github.com/watchdogd/watchdogd/internal/notify/nudge"
	"github.com/watchdogd/watchdogd/internal/notify/slack"
	"github.com/watchdogd/watchdogd/internal/notify/snooze"
)

// RegisterClicks adds the outlets of what a click in Slack decides to reg
// (slack.interactivity): kandev's answers and permissions (they fence
// themselves: their read also says who answered first), a hidden
// question's answer sent as a message (fenced, keyed like a nudge),
// snooze and resolve (the ledger's; not fenced: a person asked for
// quiet), and the click's story. kandev's go through kandev's lane, the
// story through its channel's. The story is not paced: it answers a
// person who just clicked, and a snooze's own silence must not hold it.
func RegisterClicks(reg notify.Registry, s *slack.Outlet, n *nudge.Outlet, a *answer.Outlet, q *snooze.Outlet) {
	reg.Register(model.ActionAnswer, notify.Entry{Outlet: a, Name: Kandev, To: kandev})
	reg.Register(model.ActionPermission, notify.Entry{Outlet: a, Name: Kandev, To: kandev})
	reg.Register(model.ActionSendMessage, notify.Entry{Outlet: n, Name: Kandev, To: kandev, Fenced: true})
	reg.Register(model.ActionSnooze, notify.Entry{Outlet: q, Name: "ledger"})
	reg.Register(model.ActionResolve, notify.Entry{Outlet: q, Name: "ledger"})
	reg.Register(model.ActionSlackTell, notify.Entry{Outlet: s, Name: Slack, RateLimited: s.RateLimited})
}
