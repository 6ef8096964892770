package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/watchdogd/watchdogd/internal/model"
)

// DurationBuckets are watchdogd_episode_duration_seconds' buckets: a
// minute to a week, as long as episodes hold.
var DurationBuckets = []float64{60, 300, 900, 1800, 3600, 2 * 3600, 4 * 3600, 8 * 3600, 24 * 3600, 3 * 24 * 3600, 7 * 24 * 3600}

// Lives are the metrics of episodes' lives: how long each held, by why it
// cleared, and how many opened.
type Lives struct {
	// Duration is how long each resolved episode held, from its since
	// (when the condition began) to its resolve, by kind (the kind it
	// resolved as) and cleared (model.Cleared). The leader counts each
	// resolve in the ledger once, whoever resolved it (Resolved).
	Duration *prometheus.HistogramVec
	// Opened counts episodes opened, by the kind they opened as, in the
	// process whose cycle opened them.
	Opened *prometheus.CounterVec

	mu sync.Mutex
	// seen is the highest resolve number this process counted: none at
	// or below it is counted again, whatever the ledger hands out.
	seen int64
}

func newLives(reg prometheus.Registerer, ns string) *Lives {
	l := &Lives{
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "episode_duration_seconds",
			Help:    "How long each resolved episode held, from when its condition began (since) to its resolve, by kind (the kind it resolved as) and cleared (why: a code, as watchdogd report counts it). Counted by the leader from the ledger, once per resolve, whichever process resolved it.",
			Buckets: DurationBuckets}, []string{"kind", "cleared"}),
		Opened: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "episodes_opened_total",
			Help: "Episodes opened, by the kind they opened as."}, []string{"kind"}),
	}
	reg.MustRegister(l.Duration, l.Opened)
	for _, k := range model.Kinds {
		l.Opened.WithLabelValues(string(k))
		for _, c := range model.ClearedBy(k) {
			l.Duration.WithLabelValues(string(k), string(c))
		}
	}
	return l
}

// Resolved counts resolve number seq, of an episode of kind that held for
// seconds and cleared as cleared, unless this process counted it (or a
// later one) already: a ledger restored from a backup, or handed back by a
// take whose commit was uncertain, is never counted twice here.
func (l *Lives) Resolved(seq int64, kind model.Kind, cleared model.Cleared, seconds float64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if seq <= l.seen {
		return false
	}
	l.seen = seq
	if !cleared.Known() {
		cleared = model.ClearedOther
	}
	l.Duration.WithLabelValues(string(kind), string(cleared)).Observe(seconds)
	return true
}

// Opening counts the episodes a committed decision opened.
func (l *Lives) Opening(es []model.Episode) {
	for _, e := range es {
		l.Opened.WithLabelValues(string(e.Kind)).Inc()
	}
}
