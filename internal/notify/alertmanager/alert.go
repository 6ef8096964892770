// Package alertmanager is watchdogd's Alertmanager outlet: each open
// episode is one alert, sent when its step is due and then again every
// resend_interval (Resender) for as long as it is open — Alertmanager
// resolves an alert it stops hearing about — and ended when the episode
// resolves. Only the first send and the resolve are ledger actions; the
// resends carry no state, and are built from the ledger's episodes each
// time.
//
// The API's payload is five fields, written here rather than taken from
// Alertmanager's module: its api/v2/models package would bring go-openapi
// and a BSON library into the binary for one struct.
package alertmanager

import (
	"strings"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify/words"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
)

// Alert is a postable alert of Alertmanager's API v2.
type Alert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     string            `json:"startsAt"`
	EndsAt       string            `json:"endsAt,omitempty"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
}

// Options are what every alert takes from the config.
type Options struct {
	Labels   map[string]string
	Severity func(model.Kind) string
	// RunbookURL is the runbook_url annotation.
	RunbookURL string
	// ExternalURL is where people reach watchdogd; the generatorURL,
	// else the task's kandev link.
	ExternalURL string
}

// AlertName is a kind's alertname: Kandev and the kind in CamelCase
// (KandevStalledTurn).
func AlertName(kind model.Kind) string {
	var b strings.Builder
	b.WriteString("Kandev")
	for _, part := range strings.Split(string(kind), "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// Alerts are an episode's alerts, f being its finding: one for its kind,
// firing, or ended at end when end is set. A question that changed kind
// (unanswered ↔ shadowed: another alertname) also has the other kind's
// alert, ended at now, so that Alertmanager ends it at once rather than
// when it stops hearing about it.
func Alerts(e model.Episode, f scan.Finding, o Options, end, now time.Time) []Alert {
	out := []Alert{alert(e, e.Kind, f, o, end)}
	if e.KindChanges > 0 && e.Kind.Question() {
		other := model.KindUnansweredClarification
		if e.Kind == other {
			other = model.KindShadowedClarification
		}
		if end.IsZero() {
			end = now
		}
		out = append(out, alert(e, other, f, o, end))
	}
	return out
}

func alert(e model.Episode, kind model.Kind, f scan.Finding, o Options, end time.Time) Alert {
	labels := make(map[string]string, len(o.Labels)+7)
	for k, v := range o.Labels {
		labels[k] = v
	}
	labels["alertname"] = AlertName(kind)
	labels["kind"] = string(kind)
	labels["episode_id"] = e.ID
	labels["session_id"] = e.SessionID
	labels["task_id"] = e.TaskID
	labels["workspace_id"] = e.WorkspaceID
	labels["severity"] = o.Severity(kind)
	f.Kind = kind
	title := term.TitleLabel(f.TaskTitle, f.TaskID)
	a := Alert{Labels: labels,
		Annotations: map[string]string{
			"summary":     Inert(upperFirst(model.KindWords(kind))+" on "+title, MaxSummary),
			"description": Inert(words.Sentence(f), MaxDescription),
			"kandev_url":  f.Link,
			"runbook_url": o.RunbookURL,
		},
		StartsAt:     e.Since.UTC().Format(time.RFC3339Nano),
		GeneratorURL: o.ExternalURL,
	}
	if a.GeneratorURL == "" {
		a.GeneratorURL = f.Link
	}
	if !end.IsZero() {
		a.EndsAt = end.UTC().Format(time.RFC3339Nano)
	}
	return a
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
