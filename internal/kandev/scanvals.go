package kandev

import (
	"fmt"
	"time"

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/kandevtime"
	"github.com/watchdogd/watchdogd/internal/model"
)

// stamp scans a timestamp column: text on SQLite (any of kandev's shapes),
// time.Time on PostgreSQL (timestamp without time zone holding UTC).
type stamp struct {
	valid  bool
	text   string
	at     time.Time
	native bool
}

func (s *stamp) Scan(v any) error {
	*s = stamp{}
	switch x := v.(type) {
	case nil:
	case string:
		s.valid, s.text = true, x
	case []byte:
		s.valid, s.text = true, string(x)
	case time.Time:
		s.valid, s.native, s.at = true, true, x.UTC()
		s.text = kandevtime.Canonical(s.at)
	case int64, float64:
		// SQLite's dynamic typing lets a number sit in a TIMESTAMP column;
		// no kandev shape is a number, so it counts as unparseable.
		s.valid, s.text = true, fmt.Sprint(x)
	default:
		return fmt.Errorf("unexpected timestamp value of type %T", v)
	}
	return nil
}

// time parses the value; an unparseable one is listed, by row, and read as
// missing.
func (s stamp) time(snap *model.Snapshot, row model.RowRef) time.Time {
	t, ok := s.parse()
	if !ok {
		snap.Unparseable = append(snap.Unparseable, row)
	}
	return t
}

// parse parses the value: zero when missing; zero and false when no kandev
// shape matches.
func (s stamp) parse() (time.Time, bool) {
	switch {
	case !s.valid:
		return time.Time{}, true
	case s.native:
		return s.at, true
	}
	t, ok := kandevtime.Parse(s.text)
	if !ok {
		return time.Time{}, false
	}
	return t, true
}

// authority gives the comparable form the Go rule orders by: stored text on
// SQLite, canonical instant text on PostgreSQL.
func (s stamp) authority() authority.Stamp {
	return authority.Stamp{Text: s.text, Valid: s.valid}
}

// boolish scans an integer or boolean column (is_primary is INTEGER in
// kandev's SQLite schema and may be boolean elsewhere).
type boolish bool

func (b *boolish) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*b = false
	case bool:
		*b = boolish(x)
	case int64:
		*b = x != 0
	default:
		return fmt.Errorf("unexpected boolean value of type %T", v)
	}
	return nil
}
