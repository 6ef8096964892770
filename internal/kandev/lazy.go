package kandev

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// ReopenAfter bounds how long the daemon reads kandev on what it learnt of
// its schema at open. kandev migrates its schema when it starts, and in a
// deployment it is upgraded while watchdogd keeps running: a table that
// appears (queued_messages, which older kandevs lack and watchdogd then
// reads as empty) must be read within minutes, not at watchdogd's next
// restart.
const ReopenAfter = 10 * time.Minute

// Lazy is a Reader that opens kandev's database on first use, again after a failed
// open, so that a daemon started while kandev's database is down stays up
// and recovers by itself, and again after a failed read or ReopenAfter, so
// that the schema check runs on the schema kandev has now: a column a kandev
// upgrade renamed is then named in one clear error instead of a driver's
// "no such column" on every cycle, and an index it dropped (SQLite's probes
// name theirs) stops failing the scan from the next cycle on.
type Lazy struct {
	URL  string
	Opts Options
	// From says where URL came from (a flag, the environment, a file and
	// line), added to the errors of opening it.
	From string
	// Tolerance is the future tolerance Opts.NotAfter applies, which a
	// reload may change.
	Tolerance time.Duration
	Now       func() time.Time // nil: time.Now

	mu     sync.Mutex
	r      *Reader
	opened time.Time
}

func (l *Lazy) get(ctx context.Context) (*Reader, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	if l.r != nil && now().Sub(l.opened) < ReopenAfter {
		return l.r, nil
	}
	_ = l.closeLocked()
	r, err := Open(ctx, l.URL, l.Opts)
	if err != nil {
		if l.From != "" {
			err = fmt.Errorf("%w (URL from %s)", err, l.From)
		}
		return nil, err
	}
	l.r, l.opened = r, now()
	return r, nil
}

// failed drops r after a read that failed for another reason than the
// caller giving up, so that the next read opens and checks the schema
// again.
func (l *Lazy) failed(ctx context.Context, r *Reader) {
	if ctx.Err() != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.r == r {
		_ = l.closeLocked()
	}
}

// Snapshot reads all active sessions.
func (l *Lazy) Snapshot(ctx context.Context) (*model.Snapshot, error) {
	r, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	snap, err := r.Snapshot(ctx)
	if err != nil {
		l.failed(ctx, r)
	}
	return snap, err
}

// TaskSnapshot reads one task's active sessions.
func (l *Lazy) TaskSnapshot(ctx context.Context, taskID string) (*model.Snapshot, error) {
	r, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	snap, err := r.TaskSnapshot(ctx, taskID)
	if err != nil {
		l.failed(ctx, r)
	}
	return snap, err
}

// Traces reads what kandev holds of sessions and turns a snapshot did not
// show.
func (l *Lazy) Traces(ctx context.Context, sessionIDs, turnIDs []string) (*model.Traces, error) {
	r, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	t, err := r.Traces(ctx, sessionIDs, turnIDs)
	if err != nil {
		l.failed(ctx, r)
	}
	return t, err
}

// Close closes the reader if it was opened.
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closeLocked()
}

func (l *Lazy) closeLocked() error {
	if l.r == nil {
		return nil
	}
	err := l.r.Close()
	l.r = nil
	return err
}
