package interact

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Groups answers who is in a Slack user group (slack.interactivity's
// allowed_usergroups) from what Slack said last, asked again once TTL has
// passed. Anyone who sees a message can click its buttons, and each click
// by someone not listed by id asks for the groups' members: asked of Slack
// every time, a person clicking in a loop would spend watchdogd's Slack
// quota until Slack answers 429 — and then the group's own members would
// be refused. So concurrent asks for one group share one request (under a
// deadline of its own: one caller giving up fails none of the others), a
// failed request is not made again before Retry (the last list Slack gave,
// if any, standing meanwhile), and a member removed from a group can act
// for up to TTL longer. One Groups lives as long as the daemon, across
// reloads.
type Groups struct {
	// Fetch asks Slack (usergroups.users.list).
	Fetch func(ctx context.Context, group string) ([]string, error)
	// TTL is how long a list stands; Retry how long after a failure Slack
	// is asked again.
	TTL, Retry time.Duration
	Now        func() time.Time

	mu     sync.Mutex
	known  map[string]members
	flight singleflight.Group
}

// members is what Slack last said of a group: its users (nil when it
// never answered), when it was asked, and the error when it failed.
type members struct {
	users []string
	at    time.Time
	err   error
}

// fetchTimeout bounds one shared request to Slack.
const fetchTimeout = 10 * time.Second

// Members lists group's members: as known when fresh, else as Slack says
// now; when Slack cannot answer, as it said last, else its error.
func (g *Groups) Members(ctx context.Context, group string) ([]string, error) {
	if users, ok, err := g.cached(group); ok {
		return users, err
	}
	ch := g.flight.DoChan(group, func() (any, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
		defer cancel()
		users, err := g.Fetch(fctx, group)
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.known == nil {
			g.known = map[string]members{}
		}
		m := members{users: users, at: g.Now()}
		if err != nil {
			m = members{users: g.known[group].users, at: m.at, err: err}
		}
		g.known[group] = m
		return m, nil
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-ch:
		m := r.Val.(members)
		if m.err != nil && m.users == nil {
			return nil, m.err
		}
		return m.users, nil
	}
}

// cached is the group's list when Slack need not be asked: fresh, or
// failed less than Retry ago (its last list, else its error).
func (g *Groups) cached(group string) ([]string, bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	m, ok := g.known[group]
	switch {
	case !ok:
		return nil, false, nil
	case m.err == nil && g.Now().Sub(m.at) < g.TTL:
		return m.users, true, nil
	case m.err != nil && g.Now().Sub(m.at) < g.Retry:
		if m.users != nil {
			return m.users, true, nil
		}
		return nil, true, m.err
	}
	return nil, false, nil
}
