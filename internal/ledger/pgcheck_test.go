package ledger_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
)

// dbWith is a new PostgreSQL database whose sessions start with each of
// sets (ALTER DATABASE … SET), as a DBA may configure a role or database.
func dbWith(t testing.TB, sets ...string) string {
	t.Helper()
	ctx := context.Background()
	u, err := pg.NewDatabase(ctx, "ledger")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	var name string
	if err := db.QueryRowContext(ctx, "SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	for _, set := range sets {
		if _, err := db.ExecContext(ctx, fmt.Sprintf("ALTER DATABASE %q SET %s", name, set)); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

// TestServerIsolationIgnored: on a database whose default isolation is
// REPEATABLE READ or SERIALIZABLE, a settle that meets its action updated
// by a decision meanwhile (a config change counting a conflict) still
// records the delivery, and replicas renewing one lease and closing one
// gate at once see no error; at those levels each failed with SQLSTATE
// 40001, and a delivered action would be taken over as uncertain.
func TestServerIsolationIgnored(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		iso    string
		bounce bool // through PgBouncer in session pooling (isolation set after connecting)
	}{{"repeatable read", false}, {"serializable", false}, {"serializable", true}}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/pgbouncer=%v", c.iso, c.bounce), func(t *testing.T) {
			u := dbWith(t, "default_transaction_isolation TO '"+c.iso+"'")
			via := u
			if c.bounce {
				b, err := sessionBouncer()
				if err != nil {
					t.Fatal(err)
				}
				if via, err = b.Through(u); err != nil {
					t.Fatal(err)
				}
			}
			s := open(t, via)
			if _, _, err := s.Decide(ctx, func(model.Ledger) (model.Plan, error) {
				return model.Plan{Now: t0, Open: []model.Episode{newEpisode("ep1")}, Actions: []model.Action{action("k1", "ep1", "d1")}}, nil
			}); err != nil {
				t.Fatal(err)
			}
			if _, ok, err := s.Claim(ctx, "k1", "a", "ta", t0, time.Minute); !ok || err != nil {
				t.Fatalf("claim %v %v", ok, err)
			}
			raw, err := sql.Open("pgx", u)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = raw.Close() }()
			tx, err := raw.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, "UPDATE watchdogd.actions SET conflicts = conflicts + 1 WHERE key = 'k1'"); err != nil {
				t.Fatal(err)
			}
			settled := make(chan error, 1)
			go func() {
				settled <- s.Settle(ctx, "k1", "ta", model.Outcome{State: model.StateDelivered, ResultTS: "1.2"}, t0.Add(time.Second))
			}()
			time.Sleep(300 * time.Millisecond) // the settle waits on the row
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := <-settled; err != nil {
				t.Fatalf("settle after a concurrent update: %v", err)
			}
			if a, err := s.Action(ctx, "k1"); err != nil || a.State != model.StateDelivered {
				t.Fatalf("action %s: %v, want delivered", a.State, err)
			}
			contend(t, open(t, via), s)
		})
	}
}

// contend has two stores renew one lease and close one gate, 8 at once
// each, 10 times: no error, and the gate holds the latest end asked.
func contend(t *testing.T, stores ...*ledger.Store) {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	var errs []string
	var wg sync.WaitGroup
	for i := range 16 {
		s := stores[i%len(stores)]
		wg.Go(func() {
			for j := range 10 {
				_, _, lerr := s.AcquireLease(ctx, "leader", fmt.Sprintf("h%d", i%2), time.Minute)
				gerr := s.CloseGate(ctx, "C1", t0.Add(time.Duration(i*10+j)*time.Second))
				mu.Lock()
				for _, err := range []error{lerr, gerr} {
					if err != nil {
						errs = append(errs, err.Error())
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d errors from the lease and the gate, the first: %s", len(errs), errs[0])
	}
	if until, err := stores[0].GateUntil(ctx, "C1"); err != nil || !until.Equal(t0.Add(159*time.Second)) {
		t.Fatalf("gate until %v (%v), want the latest asked, %v", until, err, t0.Add(159*time.Second))
	}
}

// TestReadOnlyServerRefused: a ledger on a database whose transactions
// are read-only is refused at open, saying so, not at its first write
// with a bare SQLSTATE.
func TestReadOnlyServerRefused(t *testing.T) {
	_, err := ledger.Open(context.Background(), dbWith(t, "default_transaction_read_only TO on"))
	if err == nil || !strings.Contains(err.Error(), "read-only there (default_transaction_read_only") {
		t.Fatalf("open a read-only ledger: %v", err)
	}
}

// TestTransactionPoolingRefused: a ledger through PgBouncer in
// transaction pooling is refused at open, naming it, where it used to
// start and then fail every cycle; session pooling (a dialect of every
// ledger test) still opens.
func TestTransactionPoolingRefused(t *testing.T) {
	b, err := pg.StartBouncer("transaction", 20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	u, err := pg.NewDatabase(context.Background(), "ledger")
	if err != nil {
		t.Fatal(err)
	}
	if u, err = b.Through(u); err != nil {
		t.Fatal(err)
	}
	_, err = ledger.Open(context.Background(), u)
	if err == nil || !strings.Contains(err.Error(), "transaction pooling") {
		t.Fatalf("open through transaction pooling: %v", err)
	}
}
