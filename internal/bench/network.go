package bench

import (
	"context"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandev"
	"github.com/watchdogd/watchdogd/internal/pgtest"
)

// Network is the scan and the naive loop on PostgreSQL through a link that
// adds RTT to every round trip: a database in another zone rather than on
// loopback. The naive loop pays RTT once per query, the scan once per
// statement of a fixed few, so the gap that loopback's tens of microseconds
// hide shows here measured, not derived.
type Network struct {
	RTT          time.Duration
	Scan, Naive  time.Duration
	ScanTrips    int64 // round trips of one scan
	NaiveTrips   int64 // round trips of one naive loop
	NaiveQueries int
}

// network measures Network on a loaded PostgreSQL dataset, through a link
// of cfg.RTT: the scan over cfg.Runs runs, the naive loop over half as
// many (at 1 ms it takes about 1.5 s per thousand queries). Round trips are
// counted on one run of each after the warm-up, so that connecting and
// preparing are not among them.
func (cfg Config) network(ctx context.Context, db *database) (Network, error) {
	n := Network{RTT: cfg.RTT}
	link, url, err := pgtest.StartLink(db.url, cfg.RTT)
	if err != nil {
		return n, err
	}
	defer link.Close()
	r, err := kandev.Open(ctx, url, kandev.Options{})
	if err != nil {
		return n, err
	}
	defer func() { _ = r.Close() }()
	raw, err := openRaw(&database{dialect: db.dialect, url: url})
	if err != nil {
		return n, err
	}
	defer func() { _ = raw.Close() }()
	scan := func() error { _, err := scanOnce(ctx, r); return err }
	naive := func() error { q, err := naiveOnce(ctx, raw, true); n.NaiveQueries = q; return err }
	if n.Scan, err = median(cfg.Runs, scan); err != nil {
		return n, err
	}
	if n.ScanTrips, err = trips(link, scan); err != nil {
		return n, err
	}
	if n.Naive, err = median(max(cfg.Runs/2, 1), naive); err != nil {
		return n, err
	}
	n.NaiveTrips, err = trips(link, naive)
	return n, err
}

// trips runs f once and counts its round trips across link.
func trips(link *pgtest.Link, f func() error) (int64, error) {
	before := link.RoundTrips()
	err := f()
	return link.RoundTrips() - before, err
}
