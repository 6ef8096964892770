package kandev

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/kandevsql"
	"github.com/watchdogd/watchdogd/internal/model"
)

// readMessages reads the current turns' messages in one statement, and on
// SQLite a second for the turns with an update julianday cannot order
// (kandevsql.Messages), which exist only when kandev wrote an odd shape.
func (r *Reader) readMessages(ctx context.Context, tx *sql.Tx, snap *model.Snapshot, sessions []model.Session, limit string) error {
	// The statement answers with each id's position in ids; owner maps it
	// back to the session, without a map of 10,000 turn ids per scan.
	ids := make([]string, 0, len(sessions))
	owner := make([]int, 0, len(sessions))
	for i, s := range sessions {
		// A turn whose id is NULL has no messages: none can name it.
		if s.Current != nil && !s.Current.NullID {
			ids = append(ids, s.Current.ID)
			owner = append(owner, i)
		}
	}
	var big []bigAt
	again, err := r.messagesOf(ctx, tx, snap, sessions, false, ids, owner, limit, &big)
	if err != nil {
		return err
	}
	if len(again) == 0 {
		return r.readBigMetadata(ctx, tx, snap, sessions, big)
	}
	ids, owner = ids[:0], owner[:0]
	for _, i := range again {
		ids = append(ids, sessions[i].Current.ID)
		owner = append(owner, i)
	}
	if _, err = r.messagesOf(ctx, tx, snap, sessions, true, ids, owner, limit, &big); err != nil {
		return err
	}
	return r.readBigMetadata(ctx, tx, snap, sessions, big)
}

// messagesOf runs one messages statement over ids and sets the owners'
// messages; it returns the sessions whose turn must be read again with
// unordered set.
func (r *Reader) messagesOf(ctx context.Context, tx *sql.Tx, snap *model.Snapshot, sessions []model.Session, unordered bool, ids []string, owner []int, limit string, big *[]bigAt) ([]int, error) {
	var arg any = ids
	if r.dialect == authority.SQLite {
		b, err := json.Marshal(ids)
		if err != nil {
			return nil, fmt.Errorf("encode turn ids: %w", err)
		}
		arg = string(b)
	}
	rows, err := r.query(ctx, tx, snap, kandevsql.Messages(r.dialect, unordered), arg, limit)
	if err != nil {
		return nil, r.wrap("read current-turn messages", err)
	}
	defer func() { _ = rows.Close() }()
	var again []int
	var n int64
	var probe, newestType, list, users sql.NullString
	var newest stamp
	var ahead, total int64
	dest := []any{&n, &probe}
	if r.dialect == authority.Postgres {
		dest = []any{&n, &newest, &newestType, &list, &users, &ahead, &total}
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, r.wrap("read current-turn messages", err)
		}
		if n < 0 || n >= int64(len(owner)) {
			return nil, r.wrap("read current-turn messages", fmt.Errorf("turn position %d of %d", n, len(owner)))
		}
		i := owner[n]
		turn := sessions[i].Current.ID
		var msgs []model.Message
		var bigs []bigAt
		var unorderable bool
		switch {
		case r.dialect == authority.Postgres:
			msgs, bigs, err = r.messagesFrom(snap, turn, agg{newest, nullPtr(newestType), ahead, total}, list, users)
		case probe.Valid:
			msgs, bigs, unorderable, err = r.decodeMessages(snap, turn, probe.String, &total)
		default:
			continue
		}
		if err != nil {
			return nil, r.wrap("read current-turn messages", err)
		}
		if unorderable {
			again = append(again, i)
			continue
		}
		setMessages(snap, &sessions[i], msgs)
		sessions[i].Current.MessageCount = int(total)
		for _, b := range bigs {
			b.session = i
			*big = append(*big, b)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, r.wrap("read current-turn messages", err)
	}
	return again, nil
}

// setMessages gives a session its current turn's messages and lists those
// whose metadata is malformed, which the report names row by row.
func setMessages(snap *model.Snapshot, s *model.Session, msgs []model.Message) {
	for _, m := range msgs {
		// A NULL id (SQLite only) fails kandev's read of the turn's messages.
		if m.NullID || m.Meta.Kind == authority.Malformed {
			snap.Malformed = append(snap.Malformed, model.MessageRow(m, s.Current.ID))
			s.MalformedMetadata = true
		}
	}
	s.Messages = msgs
}

// agg is what the messages statement aggregates over a turn's rows: the
// newest plain agent update and its type, the count of updates after the
// limit, and the count of messages.
type agg struct {
	newest     stamp
	newestType *string
	ahead      int64
	total      int64
}

// decodeMessages reads one turn's probe on SQLite: [newest plain agent
// updated_at, its type, [[id, author, type, content, metadata, created_at,
// updated_at, big metadata's rowid]…], [[id, type, created_at] of user
// rows…], the count of updates after the limit, the count of messages],
// and "1" when an update could not be ordered (then the rest is not
// decoded: the turn is read again). total is set to the count of messages.
func (r *Reader) decodeMessages(snap *model.Snapshot, turn, probe string, total *int64) (_ []model.Message, _ []bigAt, unorderable bool, _ error) {
	v, err := parseProbe(probe)
	if err == nil && len(v.arr) != 6 && len(v.arr) != 7 {
		err = errors.New("want 6 or 7 fields")
	}
	var a agg
	for i, n := range []*int64{&a.ahead, &a.total} {
		if err == nil && v.arr[4+i].str != nil {
			*n, err = strconv.ParseInt(*v.arr[4+i].str, 10, 64)
		}
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("decode messages %.200q: %w", probe, err)
	}
	if len(v.arr) == 7 && v.arr[6].str != nil {
		return nil, nil, true, nil
	}
	*total = a.total
	if at := v.arr[0].str; at != nil {
		a.newest = stamp{valid: true, text: *at}
	}
	a.newestType = v.arr[1].str
	msgs, big, err := r.messages(snap, turn, a, v.arr[2], v.arr[3])
	return msgs, big, false, err
}

// aheadOf lists a turn's agent updates after the snapshot's limit, which
// the statement left out of the newest: once per value, as an unparseable
// value is.
func aheadOf(snap *model.Snapshot, turn string, n int64) {
	for range n {
		snap.Future = append(snap.Future, model.RowRef{Table: "task_session_messages", Of: "an update after the scan, turn " + turn})
	}
}

// messagesFrom reads one turn's columns on PostgreSQL: the newest plain
// agent update's instant and type, the rows and the user rows as JSON lists
// (NULL: none).
func (r *Reader) messagesFrom(snap *model.Snapshot, turn string, a agg, list, users sql.NullString) ([]model.Message, []bigAt, error) {
	var rows, userRows jval
	for _, l := range []struct {
		raw sql.NullString
		v   *jval
	}{{list, &rows}, {users, &userRows}} {
		if !l.raw.Valid {
			continue
		}
		var err error
		if *l.v, err = parseProbe(l.raw.String); err != nil {
			return nil, nil, fmt.Errorf("decode messages %.200q: %w", l.raw.String, err)
		}
	}
	return r.messages(snap, turn, a, rows, userRows)
}

// messages builds a turn's messages: the newest plain agent update not
// after the limit, if any (with no time when the only ones are after it),
// then the rows the rules read, each [id, author, type, content,
// metadata, created_at, updated_at, the key to read too big metadata by
// (it is read apart: readBigMetadata)], then the user rows, each [id, type,
// created_at], read for when they were written. Content comes cut to
// one character more than is kept (kandevsql) and is cut here with the mark.
func (r *Reader) messages(snap *model.Snapshot, turn string, a agg, list, users jval) (_ []model.Message, big []bigAt, _ error) {
	var out []model.Message
	aheadOf(snap, turn, a.ahead)
	switch {
	case a.newest.valid:
		at, ok := a.newest.parse()
		if !ok { // named here, not before: the name costs an allocation
			snap.Unparseable = append(snap.Unparseable, model.RowRef{Table: "task_session_messages", Of: "newest update, turn " + turn})
		}
		out = append(out, model.Message{Author: "agent", UpdatedAt: at, Type: deref(a.newestType)})
	case a.ahead > 0:
		// The agent's only updates are after the limit: output, at a time
		// not known.
		out = append(out, model.Message{Author: "agent"})
	}
	rows, err := list.stringLists()
	if err != nil {
		return nil, nil, fmt.Errorf("decode messages: %w", err)
	}
	byUser, err := users.stringLists()
	if err != nil {
		return nil, nil, fmt.Errorf("decode user messages: %w", err)
	}
	whole := make([]rowOf, 0, len(rows)+len(byUser))
	for _, a := range rows {
		if len(a) != 8 {
			return nil, nil, fmt.Errorf("decode messages: want 8 fields")
		}
		m := model.Message{ID: deref(a[0]), NullID: a[0] == nil, Meta: authority.ParseMetadata(r.dialect, a[4])}
		row := model.MessageRow(m, turn)
		m.CreatedAt, m.UpdatedAt = parseStamp(snap, a[5], row), parseStamp(snap, a[6], row)
		m.Author, m.Type, m.Content = deref(a[1]), deref(a[2]), model.Cut(deref(a[3]), model.MaxText)
		whole = append(whole, rowOf{m, deref(a[7])})
	}
	for _, a := range byUser {
		if len(a) != 3 {
			return nil, nil, fmt.Errorf("decode user messages: want 3 fields")
		}
		m := model.Message{ID: deref(a[0]), NullID: a[0] == nil, Author: "user", Type: deref(a[1])}
		m.CreatedAt = parseStamp(snap, a[2], model.MessageRow(m, turn))
		whole = append(whole, rowOf{m: m})
	}
	// The aggregates gather rows in the order the server met them, which
	// is the table's and not kandev's, may differ between the dialects,
	// and on PostgreSQL can change when a row is updated. The rules read
	// questions in this order and take the first of equal instants, so it
	// is made kandev's own: creation, then id.
	slices.SortStableFunc(whole, func(a, b rowOf) int {
		if c := a.m.CreatedAt.Compare(b.m.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.m.ID, b.m.ID)
	})
	for _, w := range whole {
		if w.big != "" {
			big = append(big, bigAt{message: len(out), key: w.big})
		}
		out = append(out, w.m)
	}
	return out, big, nil
}

// rowOf is a message as read, with the key to read its metadata by when
// it was too big to read with the others ("" when not).
type rowOf struct {
	m   model.Message
	big string
}

// bigAt is a message whose metadata is read apart: its place among its
// session's messages and the key to read it by.
type bigAt struct {
	session, message int
	key              string
}
