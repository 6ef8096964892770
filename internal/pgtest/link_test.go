package pgtest

import (
	"context"
	"testing"
	"time"
)

// TestLink: statements through a link each cost one counted round trip and
// at least its delay, a ping is counted apart, a result bigger than any chunk arrives whole as one
// round trip, and closing the link cuts its connections.
func TestLink(t *testing.T) {
	srv, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const rtt = 20 * time.Millisecond
	link, dsn, err := StartLink(srv.DSN("postgres"), rtt)
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	ctx := context.Background()
	conn, err := ConnectSimple(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	if link.RoundTrips() == 0 {
		t.Fatal("connecting counted no round trip")
	}

	before, start := link.RoundTrips(), time.Now()
	for range 5 {
		if _, err := conn.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took < 5*rtt {
		t.Errorf("5 statements took %v through a link of %v a round trip", took, rtt)
	}
	if n := link.RoundTrips() - before; n != 5 {
		t.Errorf("5 statements counted %d round trips", n)
	}

	// A liveness ping is counted apart: database/sql sends one when it
	// reuses a connection idle for over a second, as the clock decides.
	before = link.RoundTrips()
	if err := conn.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if n, p := link.RoundTrips()-before, link.Pings(); n != 0 || p != 1 {
		t.Errorf("a ping counted %d round trips and %d pings", n, p)
	}

	// About 2 MB of rows: many chunks, one exchange, nothing lost.
	before = link.RoundTrips()
	var rows, sum int64
	if err := conn.QueryRow(ctx, "SELECT count(*), sum(length(s)) FROM (SELECT repeat('x', 100) || g AS s FROM generate_series(1, 20000) g) q").Scan(&rows, &sum); err != nil {
		t.Fatal(err)
	}
	var got int64
	r, err := conn.Query(ctx, "SELECT repeat('x', 100) || g FROM generate_series(1, 20000) g")
	if err != nil {
		t.Fatal(err)
	}
	n := int64(0)
	for r.Next() {
		var s string
		if err := r.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got += int64(len(s))
		n++
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if n != rows || got != sum {
		t.Errorf("streamed %d rows of %d bytes, the server counted %d of %d", n, got, rows, sum)
	}
	if trips := link.RoundTrips() - before; trips != 2 {
		t.Errorf("two statements, one of them a stream, counted %d round trips", trips)
	}

	link.Close()
	if _, err := conn.Exec(ctx, "SELECT 1"); err == nil {
		t.Error("a statement went through a closed link")
	}
}
