package daemon

import (
	"context"
	"sync"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/model"
)

// reopenAfter bounds how long the daemon reads kandev on what it learnt of
// its schema at open. kandev migrates its schema when it starts, and in a
// deployment it is upgraded while watchdogd keeps running: a table that
// appears (queued_messages, which older kandevs lack and watchdogd then
// reads as empty) must be read within minutes, not at watchdogd's next
// restart.
const reopenAfter = 10 * time.Minute

// lazyReader opens kandev's database on first use, again after a failed
// open, so that a daemon started while kandev's database is down stays up
// and recovers by itself, and again after a failed read or reopenAfter, so
// that the schema check runs on the schema kandev has now: a column a kandev
// upgrade renamed is then named in one clear error instead of a driver's
// "no such column" on every cycle, and an index it dropped (SQLite's probes
// name theirs) stops failing the scan from the next cycle on.
type lazyReader struct {
	url  string
	opts kandev.Options
	// tolerance is the future tolerance opts.NotAfter applies, which a
	// reload may change.
	tolerance time.Duration
	now       func() time.Time // nil: time.Now

	mu     sync.Mutex
	r      *kandev.Reader
	opened time.Time
}

func (l *lazyReader) get(ctx context.Context) (*kandev.Reader, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now
	if l.now != nil {
		now = l.now
	}
	if l.r != nil && now().Sub(l.opened) < reopenAfter {
		return l.r, nil
	}
	_ = l.closeLocked()
	r, err := kandev.Open(ctx, l.url, l.opts)
	if err != nil {
		return nil, err
	}
	l.r, l.opened = r, now()
	return r, nil
}

// failed drops r after a read that failed for another reason than the
// caller giving up, so that the next read opens and checks the schema
// again.
func (l *lazyReader) failed(ctx context.Context, r *kandev.Reader) {
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
func (l *lazyReader) Snapshot(ctx context.Context) (*model.Snapshot, error) {
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
func (l *lazyReader) TaskSnapshot(ctx context.Context, taskID string) (*model.Snapshot, error) {
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

// TurnMessages reads the messages of the turns given.
func (l *lazyReader) TurnMessages(ctx context.Context, turnIDs []string) (map[string][]model.Message, error) {
	r, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	m, err := r.TurnMessages(ctx, turnIDs)
	if err != nil {
		l.failed(ctx, r)
	}
	return m, err
}

// Close closes the reader if it was opened.
func (l *lazyReader) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closeLocked()
}

func (l *lazyReader) closeLocked() error {
	if l.r == nil {
		return nil
	}
	err := l.r.Close()
	l.r = nil
	return err
}
