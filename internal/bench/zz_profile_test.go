//go:build proftmp

package bench

import (
	"context"
	"os"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/pgtest"
)

func TestProfileScan(t *testing.T) {
	ctx := context.Background()
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := Config{Runs: 5, PG: srv, CacheDir: "/work/main/.cache/bench", Now: time.Now().Truncate(time.Hour)}
	size := Sizes[2]
	if os.Getenv("SIZE") == "medium" {
		size = Sizes[1]
	}
	db, err := cfg.load(ctx, os.Getenv("DIALECT"), size)
	if err != nil {
		t.Fatal(err)
	}
	defer db.close()
	r, err := kandev.Open(ctx, db.url, kandev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		scanOnce(ctx, r)
	}
	f, _ := os.Create("/tmp/scan.prof")
	pprof.StartCPUProfile(f)
	start := time.Now()
	for i := 0; i < 30; i++ {
		if _, err := scanOnce(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	pprof.StopCPUProfile()
	t.Logf("per scan %v", time.Since(start)/30)
}
