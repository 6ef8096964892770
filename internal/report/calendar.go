package report

import (
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

const day = 24 * time.Hour

// calendar is the window's UTC days, the first starting at from's midnight.
type calendar struct {
	start, until time.Time
	list         []Day
}

func newDays(from, until time.Time) *calendar {
	c := &calendar{start: from.Truncate(day), until: until}
	for d := c.start; d.Before(until); d = d.Add(day) {
		c.list = append(c.list, Day{Day: d.Format(time.DateOnly), Opened: zeros(), Cleared: zeros()})
	}
	return c
}

// at is the day instant t (within the window) falls on.
func (c *calendar) at(t time.Time) *Day {
	return &c.list[int(t.Sub(c.start)/day)]
}

// spread gives each day its share of the spans (each within the window),
// in whole seconds through add, and returns their total: rounded once per
// span, so that the days add up to the total.
func (c *calendar) spread(spans []span, add func(*Day, int64)) int64 {
	var total int64
	for _, s := range spans {
		secs := seconds(s.to.Sub(s.from))
		total += secs
		left := secs
		for t := s.from; t.Before(s.to) && left > 0; {
			end := t.Truncate(day).Add(day)
			if end.After(s.to) {
				end = s.to
			}
			share := min(left, seconds(end.Sub(t)))
			if !end.Before(s.to) {
				share = left // the span's last day takes what rounding left
			}
			add(c.at(t), share)
			left -= share
			t = end
		}
	}
	return total
}

// clock is the window's hours, the first starting at from's hour.
type clock struct {
	start time.Time
	list  []Hour
}

func newHours(from, until time.Time) *clock {
	c := &clock{start: from.Truncate(time.Hour)}
	for h := c.start; h.Before(until); h = h.Add(time.Hour) {
		c.list = append(c.list, Hour{Hour: stamp(h), Open: zeros()})
	}
	return c
}

// count sets each hour's open episodes by kind: those open at any moment
// of it, from when watchdogd opened them to their resolve (a resolve on
// the hour leaves that hour out). One pass over the episodes, each adding
// to the hours it spans through a difference per kind.
func (c *clock) count(eps []Episode, until time.Time) {
	n := len(c.list)
	if n == 0 {
		return
	}
	diff := map[model.Kind][]int{}
	for _, k := range model.Kinds {
		diff[k] = make([]int, n+1)
	}
	for _, e := range eps {
		d, ok := diff[e.Kind]
		if !ok {
			continue
		}
		end := until
		if !e.Resolved.IsZero() && e.Resolved.Before(until) {
			end = e.Resolved
		}
		opened := e.Opened
		if opened.Before(c.start) {
			opened = c.start
		}
		if !opened.Before(until) || end.Before(opened) {
			continue // outside the window's hours
		}
		first, last := int(opened.Sub(c.start)/time.Hour), int(opened.Sub(c.start)/time.Hour)
		if end.After(opened) {
			last = int((end.Sub(c.start) - 1) / time.Hour) // the hour of its last open instant
		}
		last = min(last, n-1)
		d[first]++
		d[last+1]--
	}
	for k, d := range diff {
		open := 0
		for i := range n {
			open += d[i]
			c.list[i].Open[k] = open
		}
	}
}

// zeros is a count for every kind, each zero: the JSON names them all.
func zeros() map[model.Kind]int {
	m := make(map[model.Kind]int, len(model.Kinds))
	for _, k := range model.Kinds {
		m[k] = 0
	}
	return m
}
