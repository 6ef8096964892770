package app

import (
	"container/list"
	"net"
	"net/http"
	"sync"
)

// The listener's bounds. Go's HTTP server keeps a goroutine, its stack and
// two 4 KiB buffers for every connection it holds, about 18 KiB each even
// while a keep-alive connection sits idle between requests: 6,000 idle
// connections would cost a 128 MiB pod 100 MiB. Prometheus, the kubelet,
// a browser on the status page and a config reloader need a handful.
const (
	// maxConns bounds the open connections. Past it, the longest idle is
	// closed to make room, so a probe still gets in; with none idle, a
	// new one waits for one to end and those after it queue in the kernel.
	maxConns = 4096
	// maxIdleConns bounds the keep-alive connections waiting idle for
	// their next request; one more going idle closes the longest idle.
	maxIdleConns = 64
)

// connGuard is a listener that bounds its connections, open and idle, as
// its track hook (the server's ConnState) sees them. Closing an idle
// keep-alive connection is something HTTP lets a server do at any time:
// clients open another, and retry an idempotent request that met the close
// (Go's client and browsers do).
type connGuard struct {
	net.Listener
	maxOpen, maxIdle int

	mu    sync.Mutex
	open  int
	idle  *list.List                 // the idle connections, longest idle first
	where map[net.Conn]*list.Element // each idle connection's place in idle
	shed  map[net.Conn]bool          // closed by Accept for room, not yet ended
	wake  chan struct{}              // a connection ended or went idle (buffered, 1)
	done  chan struct{}              // closed by Close
	once  sync.Once
}

func newConnGuard(ln net.Listener, maxOpen, maxIdle int) *connGuard {
	return &connGuard{Listener: ln, maxOpen: maxOpen, maxIdle: maxIdle, idle: list.New(),
		where: map[net.Conn]*list.Element{}, shed: map[net.Conn]bool{}, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// Accept accepts, then takes a slot for the new connection, making room
// at the cap by closing the longest idle connection or else waiting for
// one to end or go idle (the connections after it wait in the kernel's
// backlog meanwhile). Room is made only for a connection that came.
func (g *connGuard) Accept() (net.Conn, error) {
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
		if len(g.shed) == 0 { // one making room at a time
			if victim = g.popIdle(); victim != nil {
				g.shed[victim] = true
			}
		}
		g.mu.Unlock()
		if victim != nil {
			_ = victim.Close() // its end (track) frees the slot
		}
		select {
		case <-g.wake:
		case <-g.done:
			_ = c.Close()
			return nil, net.ErrClosed
		}
	}
}

// Close closes the listener and wakes an Accept waiting for a slot.
func (g *connGuard) Close() error {
	g.once.Do(func() { close(g.done) })
	return g.Listener.Close()
}

// track is the server's ConnState hook.
func (g *connGuard) track(c net.Conn, state http.ConnState) {
	if u, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = u.NetConn() // a TLS connection: Accept handed out what it wraps
	}
	var victim net.Conn
	g.mu.Lock()
	if e, ok := g.where[c]; ok {
		g.idle.Remove(e)
		delete(g.where, c)
	}
	switch state {
	case http.StateIdle:
		g.where[c] = g.idle.PushBack(c)
		if g.idle.Len() > g.maxIdle {
			victim = g.popIdle()
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

// popIdle takes the longest idle connection off the idle list, or nil
// (with g.mu held).
func (g *connGuard) popIdle() net.Conn {
	e := g.idle.Front()
	if e == nil {
		return nil
	}
	c := g.idle.Remove(e).(net.Conn)
	delete(g.where, c)
	return c
}

// release gives a connection's slot back.
func (g *connGuard) release() {
	g.mu.Lock()
	g.open--
	g.mu.Unlock()
	g.signal()
}

// signal wakes an Accept waiting at the cap to look again.
func (g *connGuard) signal() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}
