package alertmanager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/term"
)

// Outlet delivers Alertmanager actions: an episode's first alert, and its
// end, each to one member of the cluster (Member: its index in
// alertmanager.urls), each member its own lane, so that one member down
// never holds up the others. Register it for model.ActionAlertmanager,
// fenced and its own resolve, not paced: Alertmanager groups, inhibits and
// silences alerts itself, so watchdogd's silences and quiet hours do not
// hold them.
type Outlet struct {
	Client  *Client
	Options Options

	// mu orders, per member, a resend (its read of the ledger and its
	// posts) and a send: a resend that read an episode open must not post
	// it firing after the send of its end.
	mu sync.Mutex
	// members are those locks, by member index.
	members map[int]*sync.Mutex
}

// lock is member i's lock.
func (o *Outlet) lock(i int) *sync.Mutex {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.members == nil {
		o.members = map[int]*sync.Mutex{}
	}
	if o.members[i] == nil {
		o.members[i] = &sync.Mutex{}
	}
	return o.members[i]
}

// Member is the lane of an action: the index of the member it goes to
// ("0" for an action decided with no member, as for a single one).
func Member(a model.Action) string {
	if a.Channel == "" {
		return "0"
	}
	return a.Channel
}

// Render freezes the alerts an action sends: the episode's alerts firing,
// or ended at the decision for a resolve.
func (o *Outlet) Render(r notify.Rendering) (string, error) {
	e := r.Episode
	if r.Finding.Kind != "" {
		e.Kind = r.Finding.Kind // a question's kind as this cycle sees it
	}
	var end time.Time
	if notify.Resolving(r.Action) {
		end = r.Now
	}
	b, err := json.Marshal(Alerts(e, r.Finding, o.Options, end, r.Now))
	if err != nil {
		return "", fmt.Errorf("encode alerts: %w", err)
	}
	return string(b), nil
}

// Send posts the frozen alerts to the action's member.
func (o *Outlet) Send(ctx context.Context, at notify.Attempt) notify.Sent {
	var alerts []Alert
	if err := json.Unmarshal([]byte(at.Action.Body), &alerts); err != nil {
		return notify.Failed(fmt.Sprintf("decode stored alerts: %v", err))
	}
	i, err := strconv.Atoi(Member(at.Action))
	if err != nil || i < 0 || i >= len(o.Client.URLs) {
		return notify.Failed(fmt.Sprintf("alertmanager member %s is not configured any more (alertmanager.urls has %d)", Member(at.Action), len(o.Client.URLs)))
	}
	mu := o.lock(i)
	mu.Lock()
	defer mu.Unlock()
	if v, err := o.Client.PostTo(ctx, i, alerts); err != nil {
		return notify.Error(err, v)
	}
	return notify.Delivered("", "")
}

// Preview names each alert, firing or ended, and its summary.
func (o *Outlet) Preview(a model.Action, _ model.Episode, _ string) (string, error) {
	var alerts []Alert
	if err := json.Unmarshal([]byte(a.Body), &alerts); err != nil {
		return "", fmt.Errorf("decode stored alerts: %w", err)
	}
	lines := make([]string, len(alerts))
	for i, al := range alerts {
		state := "firing"
		if al.EndsAt != "" {
			state = "ended"
		}
		lines[i] = fmt.Sprintf("→ Alertmanager %s %s: %s", term.Escape(al.Labels["alertname"]), state, term.Escape(al.Annotations["summary"]))
	}
	return strings.Join(lines, "\n"), nil
}

// Resolved is how long an ended alert is sent again after its episode
// resolved, as Prometheus does for its own (15 minutes): an Alertmanager
// that missed the first end (restarting, unreachable) still ends it before
// it would have by itself.
const Resolved = 15 * time.Minute

// Episodes lists the episodes an outlet heard of: open, or resolved at or
// after resolvedSince (ledger.Store.EpisodesSentTo).
type Episodes interface {
	EpisodesSentTo(ctx context.Context, kind model.ActionKind, resolvedSince time.Time) ([]model.Episode, error)
}

// maxBatch bounds one request's alerts: a storm's thousands of open
// episodes go in several.
const maxBatch = 500

// Resend sends again, from the ledger, the alert of every open episode
// Alertmanager heard of, and the end of those resolved in the last
// Resolved, to every member, each on its own (one down or hung holds up
// none of the others, and hears of them all at the first resend it
// answers). It holds no state: what is in the ledger is what is sent. It
// says how many alerts went, and the first error.
func (o *Outlet) Resend(ctx context.Context, store Episodes, now time.Time) (int, error) {
	sent := make([]int, len(o.Client.URLs))
	errs := make([]error, len(o.Client.URLs))
	var wg sync.WaitGroup
	for i := range o.Client.URLs {
		wg.Go(func() { sent[i], errs[i] = o.resendTo(ctx, i, store, now) })
	}
	wg.Wait()
	total := 0
	for _, n := range sent {
		total += n
	}
	return total, errors.Join(errs...)
}

// resendTo is Resend to member i, under its lock.
func (o *Outlet) resendTo(ctx context.Context, i int, store Episodes, now time.Time) (int, error) {
	mu := o.lock(i)
	mu.Lock()
	defer mu.Unlock()
	eps, err := store.EpisodesSentTo(ctx, model.ActionAlertmanager, now.Add(-Resolved))
	if err != nil {
		return 0, err
	}
	var alerts []Alert
	for _, e := range eps {
		f := policy.StoredFinding(e)
		if e.ResolvedAt.IsZero() {
			f.AgeSeconds = int64(now.Sub(e.Since) / time.Second)
		}
		alerts = append(alerts, Alerts(e, f, o.Options, e.ResolvedAt, now)...)
	}
	sent := 0
	for len(alerts) > 0 {
		batch := alerts[:min(maxBatch, len(alerts))]
		alerts = alerts[len(batch):]
		if _, err := o.Client.PostTo(ctx, i, batch); err != nil {
			return sent, err
		}
		sent += len(batch)
	}
	return sent, nil
}

// New is the outlet for cfg's alertmanager: block.
func New(cfg *config.Config) (*Outlet, error) {
	a := cfg.Alertmanager
	hc, err := commoncfg.NewClientFromConfig(a.HTTPConfig.Common(), "alertmanager")
	if err != nil {
		return nil, fmt.Errorf("alertmanager.http_config: %w", err)
	}
	return &Outlet{Client: &Client{URLs: a.URLs, HTTP: hc, Timeout: a.Timeout},
		Options: Options{Labels: a.Labels, Severity: a.SeverityOf, RunbookURL: a.RunbookURL, ExternalURL: cfg.HTTP.ExternalURL}}, nil
}
