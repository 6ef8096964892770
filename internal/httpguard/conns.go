// Package httpguard bounds what clients of an HTTP listener may cost and
// reach: a listener that caps its open, idle and silent connections
// (Guard), and the checks that keep a browser page of another site from
// reading or changing a loopback listener (OnlyLoopbackHosts, CrossSite).
package httpguard

import (
	"container/list"
	"net"
	"net/http"
	"sync"
	"time"
)

// The listener's bounds. Go's HTTP server keeps a goroutine, its stack and
// two 4 KiB buffers for every connection it holds, about 18 KiB each, even
// while a keep-alive connection sits idle between requests or a new one has
// sent nothing yet: 6,000 of either would cost a 128 MiB pod 100 MiB.
// Prometheus, the kubelet, a browser on the status page and a config
// reloader need a handful.
const (
	// MaxConns bounds the open connections. Past it, the longest idle (or
	// else the longest silent) is closed to make room, so a probe still
	// gets in; with none of either, a new one waits for one to end and
	// those after it queue in the kernel.
	MaxConns = 4096
	// MaxIdleConns bounds the keep-alive connections waiting idle for
	// their next request; one more going idle closes the longest idle.
	MaxIdleConns = 64
	// MaxSilentConns bounds the connections that have not yet sent a byte
	// of their first request (the server would wait ReadHeaderTimeout for
	// each); one more arriving closes the longest silent. A client sends
	// its request as it connects, so only a flood of more than this many
	// within that moment sheds one.
	MaxSilentConns = 256
	// SilentGrace is how long a connection must have been silent before
	// it is closed to make room at MaxConns: one accepted a moment ago has
	// most often sent its request already, not yet read because the
	// server is busy (a flood reconnecting as fast as it is closed).
	SilentGrace = 500 * time.Millisecond
)

// Guard is a listener that bounds its connections, open, idle and
// silent, as its track hook (the server's ConnState) sees them. Closing an
// idle keep-alive connection is something HTTP lets a server do at any
// time: clients open another, and retry an idempotent request that met the
// close (Go's client and browsers do). A connection that has sent nothing
// has nothing to lose by its close.
type Guard struct {
	net.Listener
	maxOpen, maxIdle, maxSilent int

	mu     sync.Mutex
	open   int
	idle   queue             // the idle connections, longest idle first
	silent queue             // the connections yet to send a request, oldest first
	shed   map[net.Conn]bool // closed by Accept for room, not yet ended
	wake   chan struct{}     // a connection ended or went idle (buffered, 1)
	done   chan struct{}     // closed by Close
	once   sync.Once
}

func New(ln net.Listener, maxOpen, maxIdle, maxSilent int) *Guard {
	return &Guard{Listener: ln, maxOpen: maxOpen, maxIdle: maxIdle, maxSilent: maxSilent, idle: newQueue(), silent: newQueue(),
		shed: map[net.Conn]bool{}, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// Accept accepts, then takes a slot for the new connection, making room
// at the cap by closing the longest idle connection, or else the longest
// silent one once it has been silent for SilentGrace, or else waiting for
// one to end or go idle (the connections after it wait in the kernel's
// backlog meanwhile). Room is made only for a connection that came.
func (g *Guard) Accept() (net.Conn, error) {
	c, err := g.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		g.mu.Lock()
		if g.open < g.maxOpen {
			g.open++
			g.mu.Unlock()
			return c, nil
		}
		var victim net.Conn
		var ripe *time.Timer  // the longest silent may be closed
		if len(g.shed) == 0 { // one making room at a time
			if victim = g.idle.pop(); victim == nil {
				var wait time.Duration
				if victim, wait = g.silent.popSilent(SilentGrace); wait > 0 {
					ripe = time.NewTimer(wait)
				}
			}
			if victim != nil {
				g.shed[victim] = true
			}
		}
		g.mu.Unlock()
		if victim != nil {
			_ = victim.Close() // its end (track) frees the slot
		}
		if !g.await(ripe) {
			_ = c.Close()
			return nil, net.ErrClosed
		}
	}
}

// await waits for a connection to end or go idle, or ripe to fire (if
// set): false once the listener is closed.
func (g *Guard) await(ripe *time.Timer) bool {
	var fired <-chan time.Time
	if ripe != nil {
		defer ripe.Stop()
		fired = ripe.C
	}
	select {
	case <-g.wake:
	case <-fired:
	case <-g.done:
		return false
	}
	return true
}

// Close closes the listener and wakes an Accept waiting for a slot.
func (g *Guard) Close() error {
	g.once.Do(func() { close(g.done) })
	return g.Listener.Close()
}

// track is the server's ConnState hook.
func (g *Guard) Track(c net.Conn, state http.ConnState) {
	if u, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = u.NetConn() // a TLS connection: Accept handed out what it wraps
	}
	var victim net.Conn
	g.mu.Lock()
	g.idle.remove(c)
	g.silent.remove(c)
	switch state {
	case http.StateNew:
		if g.silent.push(c) > g.maxSilent {
			victim = g.silent.pop()
		}
	case http.StateIdle:
		if g.idle.push(c) > g.maxIdle {
			victim = g.idle.pop()
		}
		defer g.signal() // an Accept waiting at the cap may close it
	case http.StateClosed, http.StateHijacked:
		delete(g.shed, c)
		g.mu.Unlock()
		g.release()
		return
	}
	g.mu.Unlock()
	if victim != nil {
		_ = victim.Close()
	}
}

// release gives a connection's slot back.
func (g *Guard) release() {
	g.mu.Lock()
	g.open--
	g.mu.Unlock()
	g.signal()
}

// signal wakes an Accept waiting at the cap to look again.
func (g *Guard) signal() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// queue is connections in the order they joined it, oldest first (its
// owner's lock held).
type queue struct {
	order *list.List // of entry
	where map[net.Conn]*list.Element
}

type entry struct {
	c     net.Conn
	since time.Time
}

func newQueue() queue { return queue{order: list.New(), where: map[net.Conn]*list.Element{}} }

// push adds c last and returns how many the queue holds.
func (q queue) push(c net.Conn) int {
	q.where[c] = q.order.PushBack(entry{c, time.Now()})
	return q.order.Len()
}

// remove takes c out, if it is in.
func (q queue) remove(c net.Conn) {
	if e, ok := q.where[c]; ok {
		q.order.Remove(e)
		delete(q.where, c)
	}
}

// pop takes the oldest out, or returns nil.
func (q queue) pop() net.Conn {
	e := q.order.Front()
	if e == nil {
		return nil
	}
	c := q.order.Remove(e).(entry).c
	delete(q.where, c)
	return c
}

// popSilent takes the oldest out if it joined at least grace ago; else
// it says how long until it will have (0 when the queue is empty).
func (q queue) popSilent(grace time.Duration) (net.Conn, time.Duration) {
	e := q.order.Front()
	if e == nil {
		return nil, 0
	}
	if wait := grace - time.Since(e.Value.(entry).since); wait > 0 {
		return nil, wait
	}
	return q.pop(), 0
}
