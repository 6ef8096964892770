package pgtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Link stands for the network between watchdogd and a PostgreSQL server
// in another rack or zone: a TCP proxy on loopback that holds every chunk
// back by half a round-trip time in each direction, and counts round trips.
// Loopback answers in tens of microseconds, where a real network takes a
// millisecond or more, so a statement issued once per session or per
// episode hides on loopback and shows through a Link.
//
// A round trip is one exchange on one connection: the client spoke, then
// the server answered. That is the unit a network's latency multiplies, and
// the one watchdogd keeps fixed per cycle however many sessions and
// episodes there are. Liveness pings are counted apart: pgx's database/sql
// driver pings a connection that sat idle for more than a second before
// reusing it, so how many there are depends on the clock, not on the work.
type Link struct {
	ln     net.Listener
	target string
	oneWay time.Duration
	trips  atomic.Int64
	pings  atomic.Int64

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// StartLink starts a link to the server of dsn (a postgres:// URL) that
// adds rtt to every round trip (0: none, counting only), and returns it
// with dsn rewritten to go through it.
func StartLink(dsn string, rtt time.Duration) (*Link, string, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, "", fmt.Errorf("link: parse %q: %w", dsn, err)
	}
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, "", fmt.Errorf("link: %q is not a postgres:// URL", dsn)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("link: listen: %w", err)
	}
	l := &Link{ln: ln, target: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))),
		oneWay: rtt / 2, conns: map[net.Conn]struct{}{}}
	u.Host = ln.Addr().String()
	l.wg.Add(1)
	go l.accept()
	return l, u.String(), nil
}

// Through is dsn reached through a link adding rtt to every round trip,
// closed when the test ends (after anything the test started later, such
// as a daemon using it).
func Through(t testing.TB, dsn string, rtt time.Duration) string {
	t.Helper()
	link, url, err := StartLink(dsn, rtt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(link.Close)
	return url
}

// RoundTrips is how many exchanges have crossed the link so far, over all
// its connections, liveness pings left out.
func (l *Link) RoundTrips() int64 { return l.trips.Load() }

// Pings is how many of the exchanges were liveness pings.
func (l *Link) Pings() int64 { return l.pings.Load() }

// ConnectSimple connects to dsn speaking only the simple query protocol:
// one message and one answer per statement, no statement cache, so that
// what a test counts or inspects on the wire, or on a pooler's one server
// connection, is the statement it ran and nothing else.
func ConnectSimple(ctx context.Context, dsn string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	return pgx.ConnectConfig(ctx, cfg)
}

// ping is pgx's liveness ping as it crosses the wire: a simple query
// message of "-- ping".
const ping = "Q\x00\x00\x00\x0c-- ping\x00"

// Close stops accepting, cuts every connection and waits for the link's
// goroutines.
func (l *Link) Close() {
	l.mu.Lock()
	l.closed = true
	for c := range l.conns {
		_ = c.Close()
	}
	l.mu.Unlock()
	_ = l.ln.Close()
	l.wg.Wait()
}

func (l *Link) accept() {
	defer l.wg.Done()
	for {
		client, err := l.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", l.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		if !l.track(client, server) {
			return
		}
		// What the client said since the server last answered: nothing, a
		// ping, or anything else.
		var spoke atomic.Int32
		const said, pinged = 1, 2
		var pair sync.WaitGroup
		pair.Add(2)
		l.wg.Add(3)
		go l.pipe(&pair, server, client, func(b []byte) {
			if string(b) == ping {
				spoke.CompareAndSwap(0, pinged)
				return
			}
			spoke.Store(said)
		})
		go l.pipe(&pair, client, server, func([]byte) {
			switch spoke.Swap(0) {
			case said:
				l.trips.Add(1)
			case pinged:
				l.pings.Add(1)
			}
		})
		go func() {
			defer l.wg.Done()
			pair.Wait()
			l.untrack(client, server)
		}()
	}
}

// track registers a connection pair for Close; false once the link is
// closed (the pair is closed then).
func (l *Link) track(cs ...net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range cs {
		if l.closed {
			_ = c.Close()
			continue
		}
		l.conns[c] = struct{}{}
	}
	return !l.closed
}

// untrack closes a connection pair both of whose directions have ended.
func (l *Link) untrack(cs ...net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range cs {
		_ = c.Close()
		delete(l.conns, c)
	}
}

// chunk is what one read returned, and when.
type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies src to dst, each chunk written one way's delay after it was
// read. Reading goes on while earlier chunks wait, so the link delays
// without throttling: a stream of rows arrives late, not slowly. seen runs
// as each chunk is read. When src ends, dst's write side is shut, as a
// network passes on a FIN.
func (l *Link) pipe(pair *sync.WaitGroup, dst, src net.Conn, seen func([]byte)) {
	defer l.wg.Done()
	defer pair.Done()
	q := make(chan chunk, 256)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer close(q)
		buf := make([]byte, 64<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				b := bytes.Clone(buf[:n]) // only what was read: the benchmark measuring through a link shares its heap
				seen(b)
				q <- chunk{b, time.Now()}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		sleep(time.Until(c.at.Add(l.oneWay)))
		if _, err := dst.Write(c.b); err != nil {
			_ = src.Close()
			for range q { // let the reader see the close and finish
			}
			return
		}
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = dst.Close()
}
