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
// Each names its lanes (notify.Lane): a Slack channel, a webhook, an
// Alertmanager member, kandev (one), the log (one).
func Register(s Set) notify.Registry {
	reg := notify.Registry{}
	reg.Register(model.ActionNudge, notify.Entry{Outlet: s.Nudge, Name: Kandev, To: kandev, Fenced: true})
	reg.Register(model.ActionCancelAndNudge, notify.Entry{Outlet: s.Nudge, Name: Kandev, To: kandev}) // fences itself
	reg.Register(model.ActionLog, notify.Entry{Outlet: s.Log, Name: "log", Fenced: true})
	if s.Alertmanager != nil {
		reg.Register(model.ActionAlertmanager, notify.Entry{Outlet: s.Alertmanager, Name: Alertmanager, To: alertmanager.Member, Fenced: true,
			Resolve: model.ActionAlertmanager})
	}
	if s.Webhook != nil {
		reg.Register(model.ActionWebhook, notify.Entry{Outlet: s.Webhook, Name: Webhook, Paced: true, Gate: "webhook:", Fenced: true, Keyed: true,
			Resolve: model.ActionWebhook, Destination: s.Webhook.Destination})
	}
	if s.Slack == nil {
		reg.Register(model.ActionSlack, notify.Entry{Outlet: slack.Unconfigured{}, Name: Slack, Fenced: true})
		reg.Register(model.ActionSlackUpdate, notify.Entry{Outlet: slack.Unconfigured{}, Name: Slack})
		return reg
	}
	reg.Register(model.ActionSlack, notify.Entry{Outlet: s.Slack, Name: Slack, Paced: true, Fenced: true, Budget: s.Slack.Budget, RateLimited: s.Slack.RateLimited})
	reg.Register(model.ActionSlackUpdate, notify.Entry{Outlet: s.Slack, Name: Slack, Paced: true, Budget: s.Slack.Budget, RateLimited: s.Slack.RateLimited}) // says it cleared: not fenced
	return reg
}

// The outlets' names, as lanes, breakers and watchdogd_lane_up's outlet
// label know them.
const (
	Slack        = "slack"
	Webhook      = "webhook"
	Alertmanager = "alertmanager"
	Kandev       = "kandev"
)

// kandev is the one lane of everything that goes to kandev's API.
func kandev(model.Action) string { return Kandev }
