package report

import (
	"slices"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// kinds summarises each kind over [from, until): every kind, in
// model.Kinds' order, whether or not it happened.
func kinds(eps []Episode, from, until time.Time) []Kind {
	by := map[model.Kind]*Kind{}
	took := map[model.Kind][]time.Duration{}
	out := make([]Kind, len(model.Kinds))
	for i, k := range model.Kinds {
		out[i] = Kind{Kind: k, ClearedBy: map[model.Cleared]int{}}
		by[k] = &out[i]
	}
	for _, e := range eps {
		s := by[e.Kind]
		if s == nil {
			continue // a kind this build does not know
		}
		if !e.Opened.Before(from) && e.Opened.Before(until) {
			s.Opened++
		}
		switch {
		case e.Opened.Before(until) && (e.Resolved.IsZero() || !e.Resolved.Before(until)):
			s.StillOpen++
		case !e.Resolved.Before(from):
			s.Cleared++
			s.ClearedBy[clearedOf(e)]++
			took[e.Kind] = append(took[e.Kind], max(0, e.Resolved.Sub(e.Since)))
		}
	}
	for k, ds := range took {
		by[k].TimeToClear = percentiles(ds)
	}
	return out
}

// clearedOf is an episode's code; one resolved without (none should be,
// after the migration) counts as other.
func clearedOf(e Episode) model.Cleared {
	if e.Cleared == "" {
		return model.ClearedOther
	}
	return e.Cleared
}

// percentiles are the median and 90th percentile of ds, by nearest rank
// (the smallest value at or above that share of them), in whole seconds.
func percentiles(ds []time.Duration) *Percentiles {
	if len(ds) == 0 {
		return nil
	}
	slices.Sort(ds)
	rank := func(p int) time.Duration {
		i := (p*len(ds) + 99) / 100 // ceil(p% of n)
		return ds[max(i, 1)-1]
	}
	return &Percentiles{Median: seconds(rank(50)), P90: seconds(rank(90))}
}
