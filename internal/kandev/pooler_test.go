package kandev_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/pgtest"
)

// TestBehindPgBouncer: kandev's PostgreSQL behind PgBouncer, in session and
// in transaction pooling, with PgBouncer's defaults (it refuses startup
// parameters it does not track) and one server connection shared by every
// client. Two readers take turns on it: each snapshot matches a direct
// one, on the fast path and on the fallback a malformed row sends it down,
// and nothing a reader does outlives its transaction on the shared server
// connection (a session setting left there would reach kandev's own
// clients: default_transaction_read_only would stop kandev writing).
func TestBehindPgBouncer(t *testing.T) {
	ctx := context.Background()
	// In session mode each reader's connection keeps its server
	// connection, so the pool must hold them all.
	for mode, size := range map[string]int{"session": 5, "transaction": 1} {
		t.Run(mode, func(t *testing.T) {
			bouncer, err := pg.StartBouncer(mode, size)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(bouncer.Close)
			for _, malformed := range []bool{false, true} {
				ds := sessionsDataset(5)
				if malformed {
					ds.Turns[0].Metadata = kandevdb.P("{")
				}
				db := load(t, dialects[1], ds, kandevdb.Options{})
				direct := snapshot(t, db.URL(), kandev.Options{})
				url, err := bouncer.Through(db.URL())
				if err != nil {
					t.Fatal(err)
				}
				var readers []*kandev.Reader
				jitOff := 0
				record := func(q string) {
					if q == "SET LOCAL jit = off" {
						jitOff++
					}
				}
				for range 2 {
					r, err := kandev.Open(ctx, url, kandev.Options{OnStatement: record})
					if err != nil {
						t.Fatalf("open through PgBouncer: %v\n%s", err, bouncer.Log())
					}
					readers = append(readers, r)
				}
				for i := range 6 {
					snap, err := readers[i%2].Snapshot(ctx)
					if err != nil {
						t.Fatalf("snapshot %d through PgBouncer: %v", i, err)
					}
					if snap.Fallback != malformed || !reflect.DeepEqual(snap.Sessions, direct.Sessions) {
						t.Fatalf("snapshot %d through PgBouncer (fallback %v) differs from the direct one (fallback %v)", i, snap.Fallback, direct.Fallback)
					}
				}
				one, err := readers[1].TaskSnapshot(ctx, direct.Sessions[2].TaskID)
				if err != nil || len(one.Sessions) != 1 || !reflect.DeepEqual(one.Sessions[0], direct.Sessions[2]) {
					t.Fatalf("task snapshot through PgBouncer: %v", err)
				}
				for _, r := range readers {
					_ = r.Close()
				}
				// PgBouncer refused jit=off at startup; each transaction
				// sets it for itself.
				if jitOff != 7 {
					t.Errorf("JIT turned off in %d of 7 snapshot transactions", jitOff)
				}
				assertNoSessionState(t, url)
			}
		})
	}
}

// assertNoSessionState reads, on the bouncer's one server connection, the
// settings a reader must only ever change for its own transaction.
func assertNoSessionState(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgtest.ConnectSimple(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	for setting, want := range map[string]string{"default_transaction_read_only": "off", "jit": "on", "transaction_read_only": "off"} {
		var got string
		if err := conn.QueryRow(ctx, "SHOW "+setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %s on the shared server connection after the scans, want the server's default %s", setting, got, want)
		}
	}
}
