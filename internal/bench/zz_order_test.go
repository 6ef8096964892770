//go:build proftmp

package bench

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/pgtest"
)

func TestOrderInterleaved(t *testing.T) {
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
	var a, b []time.Duration
	for i := 0; i < 25; i++ {
		for _, v := range []string{"", "1"} {
			os.Setenv("WD_NOORDER", v)
			s := time.Now()
			if _, err := scanOnce(ctx, r); err != nil {
				t.Fatal(err)
			}
			d := time.Since(s)
			if i < 2 {
				continue
			}
			if v == "" {
				a = append(a, d)
			} else {
				b = append(b, d)
			}
		}
	}
	slices.Sort(a)
	slices.Sort(b)
	t.Logf("ordered med %v min %v | unordered med %v min %v", a[len(a)/2], a[0], b[len(b)/2], b[0])
}
