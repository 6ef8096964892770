// Command kandevdb writes a kandev SQLite database for checks that run the
// real binary by hand (hack/readonly-root.sh, hack/memory-limit.sh): the
// demo's sessions, one of each finding, or with -sessions N a generated
// installation of N sessions like the benchmark's, whose active ones turn
// up as a storm of findings.
//
//	go run ./hack/kandevdb -out /tmp/kandev.db [-sessions 10000 [-active 0.2]]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

func main() { os.Exit(run()) }

func run() int {
	out := flag.String("out", "", "path of the SQLite file to create (must not exist)")
	sessions := flag.Int("sessions", 0, "generate this many sessions (20 turns of 5 messages each) instead of the demo's")
	active := flag.Float64("active", 0.2, "with -sessions: the share of sessions that are active")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "kandevdb: -out is required")
		return 2
	}
	if err := write(context.Background(), *out, *sessions, *active); err != nil {
		fmt.Fprintf(os.Stderr, "kandevdb: %v\n", err)
		return 1
	}
	return 0
}

func write(ctx context.Context, path string, sessions int, active float64) (err error) {
	switch _, statErr := os.Stat(path); {
	case statErr == nil:
		return fmt.Errorf("%s exists; kandevdb only creates", path)
	case !errors.Is(statErr, os.ErrNotExist):
		return statErr
	}
	db, err := kandevdb.CreateSQLite(path, kandevdb.Options{})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	now := time.Now()
	if sessions == 0 {
		return db.Write(ctx, kandevdb.Demo(now))
	}
	spec := kandevdb.Spec{Sessions: sessions, ActiveFraction: active, TurnsPerSession: 20, MessagesPerTurn: 5, Seed: 1, Now: now}
	return kandevdb.Generate(spec, func(d kandevdb.Dataset) error { return db.Write(ctx, d) })
}
