package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/pgtest"
)

// Config is one benchmark run.
type Config struct {
	Sizes    []Size
	Runs     int
	CacheDir string
	// Binary is the watchdogd binary whose peak RSS is measured scanning
	// the largest size.
	Binary string
	PG     *pgtest.Server
	Log    io.Writer
	// Explain, if set, receives the scan statements' plans at the largest
	// size.
	Explain io.Writer
	Now     time.Time
	// RTT, if set, is the round-trip time of a network between the scan
	// and PostgreSQL, for the measurement through a link (Network).
	RTT time.Duration
}

// Run measures every size on both dialects.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	var out []Result
	for i, size := range cfg.Sizes {
		largest := i == len(cfg.Sizes)-1
		for _, dialect := range []string{"sqlite", "postgres"} {
			fmt.Fprintf(cfg.Log, "# %s on %s: loading…\n", size.Name, dialect)
			start := time.Now()
			db, err := cfg.load(ctx, dialect, size)
			if err != nil {
				return nil, fmt.Errorf("%s %s: load: %w", size.Name, dialect, err)
			}
			fmt.Fprintf(cfg.Log, "# %s on %s: loaded in %s, measuring…\n", size.Name, dialect, time.Since(start).Round(time.Second))
			r, err := cfg.measure(ctx, db, size, largest)
			if err == nil {
				err = cfg.history(ctx, db, size, &r)
			}
			db.close()
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", size.Name, dialect, err)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// measure takes one row's figures on a loaded dataset but history2x: the
// compared figures in interleaved rounds, the naive loop, the plans and peak
// RSS at the largest size. Its connections are closed when it returns, so
// that the dataset may be copied.
func (cfg Config) measure(ctx context.Context, db *database, size Size, largest bool) (Result, error) {
	res := Result{Dialect: db.dialect, Size: size.Name, Sessions: size.Sessions,
		Turns: size.Sessions * size.TurnsPerSession, Messages: size.Sessions * size.TurnsPerSession * size.MessagesPerTurn}
	r, err := kandev.Open(ctx, db.url, kandev.Options{})
	if err != nil {
		return res, err
	}
	defer func() { _ = r.Close() }()
	raw, err := openRaw(db)
	if err != nil {
		return res, err
	}
	defer func() { _ = raw.Close() }()
	pg := db.dialect == "postgres"
	stmts, err := scanStatements(ctx, r, pg)
	if err != nil {
		return res, err
	}
	ds, err := interleaved(cfg.Runs,
		func() error { n, err := scanOnce(ctx, r); res.Active = n; return err },
		func() error { return stmts.run(ctx, raw) },
		func() error { return drain(ctx, raw, floorQuery(pg, false)) },
		func() error { return drain(ctx, raw, floorQuery(pg, true)) })
	if err != nil {
		return res, err
	}
	res.Scan, res.Statements, res.Floor, res.FloorOpen = ds[0], ds[1], ds[2], ds[3]
	if res.Naive, err = median(max(cfg.Runs/2, 1), func() error { n, err := naiveOnce(ctx, raw, pg); res.NaiveQueries = n; return err }); err != nil {
		return res, err
	}
	if largest && cfg.Explain != nil {
		if err := explain(ctx, cfg.Explain, r, raw, db.dialect); err != nil {
			return res, err
		}
	}
	if largest && cfg.Binary != "" {
		if res.RSSMiB, err = peakRSS(ctx, cfg.Binary, db.url); err != nil {
			return res, err
		}
	}
	if pg && cfg.RTT > 0 {
		fmt.Fprintf(cfg.Log, "# %s on %s: through a link of %v a round trip…\n", size.Name, db.dialect, cfg.RTT)
		n, err := cfg.network(ctx, db)
		if err != nil {
			return res, fmt.Errorf("through a link of %v: %w", cfg.RTT, err)
		}
		res.Network = &n
	}
	return res, nil
}

// history times the scan on the dataset and on a copy of it with the
// terminal history doubled (the same active sessions, twice the rest), in
// interleaved rounds of three times the runs of the other figures: the
// target (≤ 1.1×) is a ratio of two medians close to 1, which a drift of
// the machine between a block of runs before the growth and one after it
// would otherwise decide (one such run came out at 0.85, another at 1.11,
// on 2026-12-02). The generator's garbage is collected first, so that the
// benchmark process's own collector bills neither side for it.
func (cfg Config) history(ctx context.Context, db *database, size Size, res *Result) error {
	more := cfg.spec(size)
	more.Sessions = size.Sessions - res.Active
	more.IDOffset, more.TerminalOnly = size.Sessions, true
	fmt.Fprintf(cfg.Log, "# %s on %s: a copy with the terminal history doubled (+%d sessions)…\n", size.Name, db.dialect, more.Sessions)
	grown, err := db.grown(ctx, more)
	if err != nil {
		return fmt.Errorf("double the terminal history: %w", err)
	}
	defer grown.close()
	if err := differ(ctx, db, grown, more.Sessions); err != nil {
		return err
	}
	var scans []func() error
	for _, url := range []string{db.url, grown.url} {
		r, err := kandev.Open(ctx, url, kandev.Options{})
		if err != nil {
			return err
		}
		defer func() { _ = r.Close() }()
		scans = append(scans, func() error {
			n, err := scanOnce(ctx, r)
			if err == nil && n != res.Active {
				err = fmt.Errorf("history changed the active sessions: %d, was %d", n, res.Active)
			}
			return err
		})
	}
	runtime.GC()
	ds, err := interleaved(3*cfg.Runs, scans...)
	if err != nil {
		return err
	}
	res.ScanHistory1, res.ScanHistory2 = ds[0], ds[1]
	return nil
}

// differ checks that grown holds added sessions more than db: the two
// scans history times must read different data, or the ratio would prove
// nothing (a copy that was not grown, or the dataset itself, gives 1.0).
func differ(ctx context.Context, db, grown *database, added int) error {
	n, err := countSessions(ctx, db)
	if err != nil {
		return err
	}
	m, err := countSessions(ctx, grown)
	if err != nil {
		return err
	}
	if m != n+added {
		return fmt.Errorf("the copy with the history doubled has %d sessions, want %d (the dataset's %d and %d added)", m, n+added, n, added)
	}
	return nil
}

// countSessions counts every session of a dataset, terminal ones included.
func countSessions(ctx context.Context, db *database) (int, error) {
	raw, err := openRaw(db)
	if err != nil {
		return 0, err
	}
	defer func() { _ = raw.Close() }()
	var n int
	if err := raw.QueryRowContext(ctx, "SELECT count(*) FROM task_sessions").Scan(&n); err != nil {
		return 0, fmt.Errorf("count the sessions of %s: %w", db.url, err)
	}
	return n, nil
}

// openRaw opens the connection the floor and the naive loop run on. On
// PostgreSQL it turns JIT off, as watchdogd's own connections do, so that
// every side is measured under the same planner settings.
func openRaw(db *database) (*sql.DB, error) {
	if db.dialect == "postgres" {
		cfg, err := pgx.ParseConfig(db.url)
		if err != nil {
			return nil, err
		}
		cfg.RuntimeParams["jit"] = "off"
		return stdlib.OpenDB(*cfg), nil
	}
	path := strings.TrimPrefix(db.url, "sqlite://")
	return sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
}

// peakRSS runs `watchdogd scan` on the dataset and returns its peak RSS
// (VmHWM), polled from /proc while it runs. ru_maxrss would not do: Linux
// carries the forking parent's high-water mark across exec, and this
// process holds whole datasets.
func peakRSS(ctx context.Context, binary, url string) (float64, error) {
	cmd := exec.CommandContext(ctx, binary, "scan", "--database-url", url, "--output", "json")
	cmd.Stdout = io.Discard
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	peak := 0.0
	for {
		if b, err := os.ReadFile(status); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				var kib float64
				if _, err := fmt.Sscanf(line, "VmHWM: %f kB", &kib); err == nil && kib/1024 > peak {
					peak = kib / 1024
				}
			}
		}
		select {
		case err := <-done:
			if err != nil {
				return 0, fmt.Errorf("watchdogd scan: %w: %s", err, stderr.String())
			}
			return peak, nil
		case <-time.After(200 * time.Microsecond):
		}
	}
}

// statements are the scan's statements with the messages statement's
// argument (the current turn ids, from one snapshot).
type statements struct {
	sessions, messages string
	// args are the messages statement's: the current turn ids and the
	// limit (a scan's instant and the default tolerance).
	args []any
}

func scanStatements(ctx context.Context, r *kandev.Reader, pg bool) (statements, error) {
	snap, err := r.Snapshot(ctx)
	if err != nil {
		return statements{}, err
	}
	var ids []string
	for _, s := range snap.Sessions {
		if s.Current != nil {
			ids = append(ids, s.Current.ID)
		}
	}
	var arg any = ids
	if !pg {
		b, err := json.Marshal(ids)
		if err != nil {
			return statements{}, err
		}
		arg = string(b)
	}
	st := statements{args: []any{arg, kandev.LimitText(time.Now().Add(2 * time.Minute))}}
	st.sessions, st.messages = r.Statements()
	return st, nil
}

// run executes both statements in one read transaction, as the snapshot
// does, and drains their rows.
func (st statements) run(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := drain(ctx, tx, st.sessions); err != nil {
		return err
	}
	if err := drain(ctx, tx, st.messages, st.args...); err != nil {
		return err
	}
	return tx.Commit()
}
