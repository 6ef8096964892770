package interact

import (
	"container/list"
	"sync"
	"time"
)

// gate bounds the request bodies read at once, each into a buffer of
// MaxBody of its own, so that what the endpoint holds of requests it
// cannot yet tell from anyone's is at most max of them.
//
// At the bound, a request waits its turn (first come, first served) for a
// slot until its deadline. A reader that has held its slot longer than
// grace while others wait is cut off (its read ends at once, and it is
// answered 503): Slack sends a request in one go, so a body still coming
// after grace is from a client too slow to be Slack's, or one holding the
// slot on purpose. A flood can therefore keep a click waiting for about
// (requests ahead of it) × grace / max, never for a slot held until a
// deadline.
type gate struct {
	max   int
	grace time.Duration
	bufs  sync.Pool // *[]byte of MaxBody+1

	mu      sync.Mutex
	held    list.List // *slot, in the order taken, oldest first
	waiting list.List // *waiter, first come first
	cutting int       // slots cut off and not yet given back
	timer   *time.Timer
}

// slot is one body being read.
type slot struct {
	buf   []byte
	since time.Time
	cut   func() // ends the holder's read
	isCut bool
	at    *list.Element
}

type waiter struct {
	cut func()
	got chan *slot // buffered, 1
	at  *list.Element
}

func newGate(max int, grace time.Duration) *gate {
	g := &gate{max: max, grace: grace}
	g.bufs.New = func() any { b := make([]byte, MaxBody+1); return &b }
	return g
}

// take waits for a slot until deadline: false when none came. cut is
// how the slot's read is ended if it is cut off.
func (g *gate) take(deadline time.Time, cut func()) (*slot, bool) {
	g.mu.Lock()
	if g.held.Len() < g.max && g.waiting.Len() == 0 {
		s := g.hold(cut)
		g.mu.Unlock()
		return s, true
	}
	w := &waiter{cut: cut, got: make(chan *slot, 1)}
	w.at = g.waiting.PushBack(w)
	g.cutSlow()
	g.mu.Unlock()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case s := <-w.got:
		return s, true
	case <-t.C:
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case s := <-w.got: // given a slot as the deadline passed
		return s, true
	default:
	}
	g.waiting.Remove(w.at)
	return nil, false
}

// give hands a slot back: to the first waiter, if any.
func (g *gate) give(s *slot) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held.Remove(s.at)
	if s.isCut {
		g.cutting--
	}
	if e := g.waiting.Front(); e != nil {
		w := g.waiting.Remove(e).(*waiter)
		n := g.holdBuf(w.cut, s.buf)
		w.got <- n
		g.cutSlow()
		return
	}
	g.bufs.Put(&s.buf)
}

// wasCut says whether s was cut off (its holder is answered 503).
func (g *gate) wasCut(s *slot) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return s.isCut
}

// hold takes a slot with a buffer of the pool's (g.mu held).
func (g *gate) hold(cut func()) *slot {
	return g.holdBuf(cut, *g.bufs.Get().(*[]byte))
}

func (g *gate) holdBuf(cut func(), buf []byte) *slot {
	s := &slot{buf: buf, since: time.Now(), cut: cut}
	s.at = g.held.PushBack(s)
	return s
}

// cutSlow cuts off, oldest first, as many readers past their grace as
// there are waiters no cut already makes room for, and sets a timer for
// the next one's grace to end while waiters remain (g.mu held).
func (g *gate) cutSlow() {
	need := g.waiting.Len() - g.cutting
	now := time.Now()
	for e := g.held.Front(); e != nil && need > 0; e = e.Next() {
		s := e.Value.(*slot)
		if s.isCut {
			continue
		}
		if wait := s.since.Add(g.grace).Sub(now); wait > 0 {
			g.wake(wait)
			return
		}
		s.isCut = true
		g.cutting++
		need--
		s.cut()
	}
}

// wake runs cutSlow again after d.
func (g *gate) wake(d time.Duration) {
	if g.timer == nil {
		g.timer = time.AfterFunc(d, func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.cutSlow()
		})
		return
	}
	g.timer.Reset(d)
}
