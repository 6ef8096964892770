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
// be refused. So concurrent asks for one group share one request, and when
// Slack cannot answer, the last list it gave still admits its members. A
// member removed from a group can act for up to TTL longer.
type Groups struct {
	// Fetch asks Slack (usergroups.users.list).
	Fetch func(ctx context.Context, group string) ([]string, error)
	TTL   time.Duration
	Now   func() time.Time

	mu     sync.Mutex
	known  map[string]members
	flight singleflight.Group
}

type members struct {
	users []string
	at    time.Time
}

// Members lists group's members: as known when fresh, else as Slack says
// now, else as Slack said last (with no error), else Slack's error.
func (g *Groups) Members(ctx context.Context, group string) ([]string, error) {
	g.mu.Lock()
	m, ok := g.known[group]
	g.mu.Unlock()
	if ok && g.Now().Sub(m.at) < g.TTL {
		return m.users, nil
	}
	v, err, _ := g.flight.Do(group, func() (any, error) {
		users, err := g.Fetch(ctx, group)
		if err != nil {
			return nil, err
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.known == nil {
			g.known = map[string]members{}
		}
		g.known[group] = members{users: users, at: g.Now()}
		return users, nil
	})
	if err != nil {
		if ok {
			return m.users, nil // Slack said so last; a 429 must not lock members out
		}
		return nil, err
	}
	return v.([]string), nil
}
