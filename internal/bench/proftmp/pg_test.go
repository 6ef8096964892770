//go:build proftmp

package proftmp

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevtest"
	"github.com/watchdogd/watchdogd/internal/pgtest"
)

func TestPGLoad(t *testing.T) {
	ctx := context.Background()
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, sz := range []struct {
		name string
		n    int
		act  float64
		tps  int
	}{{"medium", 10000, 0.2, 20}, {"large", 100000, 0.1, 10}} {
		if os.Getenv("PG_SIZES") == "medium" && sz.name == "large" {
			continue
		}
		dsn, err := srv.NewDatabase(ctx, "prof_"+sz.name)
		if err != nil {
			t.Fatal(err)
		}
		pg, err := kandevtest.CreatePostgres(ctx, dsn, kandevtest.Options{DeferIndexes: true})
		if err != nil {
			t.Fatal(err)
		}
		spec := kandevtest.Spec{Sessions: sz.n, ActiveFraction: sz.act, TurnsPerSession: sz.tps, MessagesPerTurn: 5, Seed: 42, Now: time.Now()}
		if err := kandevtest.Generate(spec, func(d kandevtest.Dataset) error { return pg.Write(ctx, d) }); err != nil {
			t.Fatal(err)
		}
		if err := pg.CreateIndexes(ctx); err != nil {
			t.Fatal(err)
		}
		_ = pg.Close()
		os.WriteFile("/tmp/pgdsn-"+sz.name, []byte(dsn), 0o644)
		t.Logf("%s loaded", sz.name)
	}
	for {
		if _, err := os.Stat("/tmp/pgstop"); err == nil {
			return
		}
		time.Sleep(time.Second)
	}
}
