// Package metrics is watchdogd's Prometheus metrics, registered on an
// injected registry with every label value created at zero, so that an
// alert on something that has not happened yet has a series to read.
package metrics

import (
	"runtime"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// Metrics are watchdogd's Prometheus metrics, registered on an
// injected registry with every label combination created at zero. No
// session ids as labels.
type Metrics struct {
	BuildInfo          *prometheus.GaugeVec
	Scans              *prometheus.CounterVec
	ScanDuration       prometheus.Histogram
	LastSuccessfulScan prometheus.Gauge
	// LastSuccessfulCycle moves only when a cycle both read kandev and
	// worked with the ledger: a scan that works over a ledger that does not
	// (read-only, full, unreachable) detects everything and tells no one.
	LastSuccessfulCycle prometheus.Gauge
	SessionsScanned     prometheus.Gauge
	Findings            *prometheus.GaugeVec
	OldestFindingAge    *prometheus.GaugeVec
	EpisodesOpen        *prometheus.GaugeVec
	EpisodesUntold      *prometheus.GaugeVec
	Actions             *prometheus.CounterVec
	ActionDelivery      *prometheus.HistogramVec
	// SlackRateLimited counts Slack actions that did not go out at their
	// turn, by reason (RateLimitReasons): Slack's own rate limit, or the
	// per-cycle budget, which is watchdogd's and says nothing of Slack.
	SlackRateLimited *prometheus.CounterVec
	AlertResends     *prometheus.CounterVec
	// SlackInteractions counts clicks received from Slack by result
	// (InteractionResults).
	SlackInteractions *prometheus.CounterVec
	// SlackRequestsShed counts requests to the HTTP mode's endpoint
	// answered 503 unread: no turn to be read came within its time, or its
	// body was too slow while others waited (a flood).
	SlackRequestsShed prometheus.Counter
	MalformedMetadata prometheus.Gauge
	// UnparseableTimestamps counts values, not rows, as the snapshot
	// lists them: those in no shape kandev writes and those too far in
	// the future, both read as missing.
	UnparseableTimestamps prometheus.Gauge
	// DestinationsClosed counts the destinations held closed, by outlet
	// (ClosableOutlets): a webhook whose receiver answered 410 Gone.
	DestinationsClosed *prometheus.GaugeVec
	// ClosedActions counts actions failed unsent because their
	// destination is closed, by outlet.
	ClosedActions *prometheus.CounterVec
	// LaneUp is 1 while a lane delivers and 0 while its breaker holds it
	// (or its destination is closed for good), by outlet (LaneOutlets)
	// and destination as the config names it; a destination no longer in
	// the config is "removed" (RemovedDestination).
	LaneUp          *prometheus.GaugeVec
	Leader          prometheus.Gauge
	ReloadSuccess   prometheus.Gauge
	ReloadTimestamp prometheus.Gauge
	// Lives are episodes' durations and openings; Workspaces the opt-in
	// per-workspace series.
	Lives      *Lives
	Workspaces *Workspaces
}

// New registers every metric on reg.
func New(reg prometheus.Registerer, version string) *Metrics {
	ns := "watchdogd"
	m := &Metrics{
		BuildInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "build_info",
			Help: "A metric with a constant 1 value labeled by version, revision (the commit built) and goversion."}, []string{"version", "revision", "goversion"}),
		Scans: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "scans_total",
			Help: "Snapshots of kandev's database, by result (success or error)."}, []string{"result"}),
		ScanDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "scan_duration_seconds",
			Help: "Time to take one snapshot of kandev and derive findings.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)}),
		LastSuccessfulScan: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "last_successful_scan_timestamp_seconds",
			Help: "Unix time of the last successful scan."}),
		LastSuccessfulCycle: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "last_successful_cycle_timestamp_seconds",
			Help: "Unix time of the last cycle that read kandev and the ledger and decided (on a standby: read both)."}),
		SessionsScanned: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "sessions_scanned",
			Help: "Active sessions in the last successful scan."}),
		Findings: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "findings",
			Help: "Findings in the last successful scan, by kind."}, []string{"kind"}),
		OldestFindingAge: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "oldest_finding_age_seconds",
			Help: "Age of the oldest finding of each kind in the last successful scan (0 when none)."}, []string{"kind"}),
		EpisodesOpen: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "episodes_open",
			Help: "Open episodes in the ledger, by kind."}, []string{"kind"}),
		EpisodesUntold: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "episodes_untold",
			Help: "Open episodes nobody was told of, by kind: an action failed for good and none is delivered, pending or in flight (watchdogd episodes retry sends them again)."}, []string{"kind"}),
		Actions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "actions_total",
			Help: "Action outcomes, by action and result (delivered, failed, superseded, conflict, deferred, retried)."}, []string{"action", "result"}),
		ActionDelivery: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "action_delivery_seconds",
			Help: "Time to deliver one action, by action.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 12)}, []string{"action"}),
		SlackRateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "slack_rate_limited_total",
			Help: "Slack actions held back, by reason: 429 (Slack answered rate limited: HTTP 429 or ratelimited), budget (the per-cycle budget, slack.max_messages_per_cycle, was spent). Actions waiting out a Retry-After are counted deferred."}, []string{"reason"}),
		AlertResends: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "alertmanager_resends_total",
			Help: "Resends of every open episode's alert to Alertmanager (each alertmanager.resend_interval, on the leader, to every member), by result (success, or error: a member did not take them)."}, []string{"result"}),
		SlackInteractions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "slack_interactions_total",
			Help: "Clicks and forms received from Slack, by result: accepted (saved to deliver), refused (not allowed, or no longer fits; the person is told), unauthorized (a bad or stale signature: 401), malformed (a body too large, too slow or unreadable, or not a click), failed (not saved: Slack retries)."}, []string{"result"}),
		SlackRequestsShed: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "slack_requests_shed_total",
			Help: "Requests to the Slack endpoint (slack.interactivity mode http) answered 503 unread: more bodies were being read at once than it reads, and the request's turn did not come within 3 s, or its body kept arriving for more than 100 ms while others waited. A flood; a click shed with it failed in Slack."}),
		MalformedMetadata: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "malformed_metadata_rows",
			Help: "Rows of kandev's tables kandev itself cannot read (metadata it cannot parse, or a NULL id), in the last scan."}),
		UnparseableTimestamps: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "unparseable_timestamps",
			Help: "Timestamp values of kandev's rows in no shape kandev writes, or more than thresholds.future_tolerance after the scan, in the last scan; each was read as missing."}),
		DestinationsClosed: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "destinations_closed",
			Help: "Destinations closed in the ledger, by outlet: a webhook whose receiver answered 410 Gone, closed until its URL changes or watchdogd episodes retry reopens it."}, []string{"outlet"}),
		ClosedActions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "closed_destination_actions_total",
			Help: "Actions failed without being sent because their destination is closed, by outlet."}, []string{"outlet"}),
		LaneUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "lane_up",
			Help: "1 while a lane (one destination: a Slack channel id, a webhook's name, an Alertmanager member's index in alertmanager.urls, kandev) delivers, 0 while its breaker holds it (it timed out or could not be connected to; one probe after each backoff) or it is closed for good (a webhook's 410). destination=\"removed\": destinations no longer in the config, 0 while any of them is held."}, []string{"outlet", "destination"}),
		Leader: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "leader",
			Help: "1 when this replica holds the lease (always 1 without HA)."}),
		ReloadSuccess: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "config_last_reload_successful",
			Help: "Whether the last configuration reload succeeded."}),
		ReloadTimestamp: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "config_last_reload_success_timestamp_seconds",
			Help: "Unix time of the last successful configuration load."}),
	}
	reg.MustRegister(m.BuildInfo, m.Scans, m.ScanDuration, m.LastSuccessfulScan, m.LastSuccessfulCycle, m.SessionsScanned, m.Findings,
		m.OldestFindingAge, m.EpisodesOpen, m.EpisodesUntold, m.Actions, m.ActionDelivery, m.SlackRateLimited, m.AlertResends, m.SlackInteractions, m.SlackRequestsShed, m.MalformedMetadata,
		m.UnparseableTimestamps, m.DestinationsClosed, m.ClosedActions, m.LaneUp, m.Leader, m.ReloadSuccess, m.ReloadTimestamp)
	m.BuildInfo.WithLabelValues(version, Revision(debug.ReadBuildInfo), runtime.Version()).Set(1)
	m.Lives, m.Workspaces = newLives(reg, ns), newWorkspaces(reg, ns)
	m.precreate()
	return m
}

// Revision is the commit the running binary was built from, as the Go
// toolchain recorded it (vcs.revision: go build in a git checkout, as make
// build and the image's build run it), or "unknown" when it recorded none
// (-buildvcs=false, a build outside a checkout, a test binary). A version
// can be any string a build was given; the revision says which source it was.
func Revision(read func() (*debug.BuildInfo, bool)) string {
	if bi, ok := read(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				return s.Value
			}
		}
	}
	return "unknown"
}

// precreate makes every label combination exist at zero, so that a rate()
// or an alert on a result that has not happened yet has a series to read.
func (m *Metrics) precreate() {
	for _, r := range []string{"success", "error"} {
		m.Scans.WithLabelValues(r)
		m.AlertResends.WithLabelValues(r)
	}
	for _, r := range InteractionResults {
		m.SlackInteractions.WithLabelValues(r)
	}
	for _, r := range RateLimitReasons {
		m.SlackRateLimited.WithLabelValues(r)
	}
	for _, o := range LaneOutlets {
		m.LaneUp.WithLabelValues(o, RemovedDestination).Set(1)
	}
	for _, o := range ClosableOutlets {
		m.DestinationsClosed.WithLabelValues(o)
		m.ClosedActions.WithLabelValues(o)
	}
	for _, k := range model.Kinds {
		m.Findings.WithLabelValues(string(k))
		m.OldestFindingAge.WithLabelValues(string(k))
		m.EpisodesOpen.WithLabelValues(string(k))
		m.EpisodesUntold.WithLabelValues(string(k))
	}
	for _, a := range model.ActionKinds {
		m.ActionDelivery.WithLabelValues(string(a))
		for _, r := range model.Results {
			m.Actions.WithLabelValues(string(a), string(r))
		}
	}
}

// ClosableOutlets label watchdogd_destinations_closed and
// watchdogd_closed_destination_actions_total: the outlets whose
// destinations can be closed.
var ClosableOutlets = []string{string(model.ActionWebhook)}

// LaneOutlets label watchdogd_lane_up: the outlets whose lanes have
// breakers.
var LaneOutlets = []string{"slack", "webhook", "alertmanager", "kandev"}

// RemovedDestination labels watchdogd_lane_up for a destination the
// config no longer names.
const RemovedDestination = "removed"

// LaneKey is a lane as the ledger holds it: outlet and destination key.
type LaneKey struct{ Outlet, Destination string }

// ObserveLanes sets watchdogd_lane_up: every lane the config names
// (labels, by ledger key), 1 unless held, and each outlet's "removed",
// 0 while a destination no longer named is held. Series of lanes no
// longer named go.
func (m *Metrics) ObserveLanes(named map[LaneKey]string, held []LaneKey) {
	down := map[LaneKey]bool{}
	removed := map[string]bool{}
	for _, h := range held {
		if _, ok := named[h]; ok {
			down[h] = true
		} else {
			removed[h.Outlet] = true
		}
	}
	m.LaneUp.Reset()
	for k, label := range named {
		m.LaneUp.WithLabelValues(k.Outlet, label).Set(up(!down[k]))
	}
	for _, o := range LaneOutlets {
		m.LaneUp.WithLabelValues(o, RemovedDestination).Set(up(!removed[o]))
	}
}

func up(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// InteractionResults label watchdogd_slack_interactions_total.
var InteractionResults = []string{"accepted", "refused", "unauthorized", "malformed", "failed"}

// Why an action was rate limited (watchdogd_slack_rate_limited_total's
// reason): the service's answer, or the per-cycle budget.
const (
	LimitedByService = "429"
	LimitedByBudget  = "budget"
)

// RateLimitReasons label watchdogd_slack_rate_limited_total.
var RateLimitReasons = []string{LimitedByService, LimitedByBudget}

// SlackLimited counts one Slack action held back for reason
// (RateLimitReasons).
func (m *Metrics) SlackLimited(reason string) {
	m.SlackRateLimited.WithLabelValues(reason).Inc()
}

// ObserveReport sets the scan gauges from a report and its snapshot.
func (m *Metrics) ObserveReport(rep scan.Report, snap *model.Snapshot) {
	m.SessionsScanned.Set(float64(len(rep.Sessions)))
	m.MalformedMetadata.Set(float64(len(snap.Malformed)))
	m.UnparseableTimestamps.Set(float64(len(snap.Unparseable) + len(snap.Future)))
	counts, oldest := map[model.Kind]int{}, map[model.Kind]int64{}
	for _, f := range rep.Findings {
		counts[f.Kind]++
		if f.AgeSeconds > oldest[f.Kind] {
			oldest[f.Kind] = f.AgeSeconds
		}
	}
	for _, k := range model.Kinds {
		m.Findings.WithLabelValues(string(k)).Set(float64(counts[k]))
		m.OldestFindingAge.WithLabelValues(string(k)).Set(float64(oldest[k]))
	}
}

// Action counts one action's result.
func (m *Metrics) Action(kind model.ActionKind, r model.Result) {
	m.Actions.WithLabelValues(string(kind), string(r)).Inc()
}

// Delivered observes how long an action took to deliver.
func (m *Metrics) Delivered(kind model.ActionKind, d time.Duration) {
	m.ActionDelivery.WithLabelValues(string(kind)).Observe(d.Seconds())
}

// EpisodesByKind sets a gauge labelled by kind from counts, every kind
// (zero when absent).
func EpisodesByKind(g *prometheus.GaugeVec, counts map[model.Kind]int) {
	for _, k := range model.Kinds {
		g.WithLabelValues(string(k)).Set(float64(counts[k]))
	}
}
