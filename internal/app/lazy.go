package app

import (
	"context"
	"sync"

	"github.com/watchdogd/watchdogd/internal/kandev"
)

// lazyReader opens kandev's database on first use and again after a failed
// open, so that a daemon started while kandev's database is down stays up
// and recovers by itself.
type lazyReader struct {
	url  string
	opts kandev.Options

	mu sync.Mutex
	r  *kandev.Reader
}

func (l *lazyReader) get(ctx context.Context) (*kandev.Reader, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.r != nil {
		return l.r, nil
	}
	r, err := kandev.Open(ctx, l.url, l.opts)
	if err != nil {
		return nil, err
	}
	l.r = r
	return r, nil
}

// Snapshot reads all active sessions.
func (l *lazyReader) Snapshot(ctx context.Context) (*kandev.Snapshot, error) {
	r, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return r.Snapshot(ctx)
}

// TaskSnapshot reads one task's active sessions.
func (l *lazyReader) TaskSnapshot(ctx context.Context, taskID string) (*kandev.Snapshot, error) {
	r, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return r.TaskSnapshot(ctx, taskID)
}

// Close closes the reader if it was opened.
func (l *lazyReader) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.r == nil {
		return nil
	}
	err := l.r.Close()
	l.r = nil
	return err
}
