// Package registry registers each of watchdogd's outlets for the action
// kinds it delivers, with how the delivery protocol treats them.
package registry

import (
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/notify/alertmanager"
	"github.com/watchdogd/watchdogd/internal/notify/logline"
	"github.com/watchdogd/watchdogd/internal/notify/nudge"
	"github.com/watchdogd/watchdogd/internal/notify/slack"
	"github.com/watchdogd/watchdogd/internal/notify/webhook"
)

// Set is the outlets built for one config; an outlet the config does not
// use is nil.
type Set struct {
	// Slack is nil without a slack: block: an action decided for Slack
	// before the block was removed then fails, saying so.
	Slack        *slack.Outlet
	Nudge        *nudge.Outlet
	Log          *logline.Outlet
	Alertmanager *alertmanager.Outlet
	Webhook      *webhook.Outlet
}

// Register is where each outlet is registered for its action kinds, with
// how the protocol treats them. A new outlet is a package and a line here.
func Register(s Set) notify.Registry {
	reg := notify.Registry{}
	reg.Register(model.ActionNudge, notify.Entry{Outlet: s.Nudge, Fenced: true})
	reg.Register(model.ActionCancelAndNudge, notify.Entry{Outlet: s.Nudge}) // fences itself
	reg.Register(model.ActionLog, notify.Entry{Outlet: s.Log, Fenced: true})
	if s.Alertmanager != nil {
		reg.Register(model.ActionAlertmanager, notify.Entry{Outlet: s.Alertmanager, Fenced: true, Resolve: model.ActionAlertmanager})
	}
	if s.Webhook != nil {
		reg.Register(model.ActionWebhook, notify.Entry{Outlet: s.Webhook, Paced: true, Lane: "webhook:", Fenced: true, Keyed: true, Resolve: model.ActionWebhook,
			Destination: s.Webhook.Destination})
	}
	if s.Slack == nil {
		reg.Register(model.ActionSlack, notify.Entry{Outlet: slack.Unconfigured{}, Fenced: true})
		reg.Register(model.ActionSlackUpdate, notify.Entry{Outlet: slack.Unconfigured{}})
		return reg
	}
	reg.Register(model.ActionSlack, notify.Entry{Outlet: s.Slack, Paced: true, Fenced: true, Budget: s.Slack.Budget, RateLimited: s.Slack.RateLimited})
	reg.Register(model.ActionSlackUpdate, notify.Entry{Outlet: s.Slack, Paced: true, Budget: s.Slack.Budget, RateLimited: s.Slack.RateLimited}) // says it cleared: not fenced
	return reg
}
