// Package outlets registers each of watchdogd's outlets for the action
// kinds it delivers, with how the delivery protocol treats them.
package outlets

import (
	"github.com/watchdogd/watchdogd/internal/deliver"
	"github.com/watchdogd/watchdogd/internal/logline"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/nudge"
	"github.com/watchdogd/watchdogd/internal/slack"
)

// Register is where each outlet is registered for its action kinds, with
// how the protocol treats them. s is nil without a slack: block: an action
// decided for Slack before the block was removed then fails, saying so. A
// new outlet is a package and a line here.
func Register(s *slack.Outlet, n *nudge.Outlet, l *logline.Outlet) deliver.Registry {
	reg := deliver.Registry{}
	reg.Register(model.ActionNudge, deliver.Entry{Outlet: n, Fenced: true})
	reg.Register(model.ActionCancelAndNudge, deliver.Entry{Outlet: n}) // fences itself
	reg.Register(model.ActionLog, deliver.Entry{Outlet: l, Fenced: true})
	if s == nil {
		reg.Register(model.ActionSlack, deliver.Entry{Outlet: slack.Unconfigured{}, Fenced: true})
		reg.Register(model.ActionSlackUpdate, deliver.Entry{Outlet: slack.Unconfigured{}})
		return reg
	}
	reg.Register(model.ActionSlack, deliver.Entry{Outlet: s, Paced: true, Fenced: true, Budget: s.Budget, RateLimited: s.RateLimited})
	reg.Register(model.ActionSlackUpdate, deliver.Entry{Outlet: s, Paced: true, Budget: s.Budget, RateLimited: s.RateLimited}) // says it cleared: not fenced
	return reg
}
