package kandev

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/watchdogd/watchdogd/internal/authority"
)

// readMessages reads the current turns' messages in one statement.
func (r *Reader) readMessages(ctx context.Context, tx *sql.Tx, snap *Snapshot, sessions []Session) error {
	// The statement answers with each id's position in ids; owner maps it
	// back to the session, without a map of 10,000 turn ids per scan.
	ids := make([]string, 0, len(sessions))
	owner := make([]int, 0, len(sessions))
	for i, s := range sessions {
		if s.Current != nil {
			ids = append(ids, s.Current.ID)
			owner = append(owner, i)
		}
	}
	var arg any = ids
	if r.dialect == authority.SQLite {
		b, err := json.Marshal(ids)
		if err != nil {
			return fmt.Errorf("encode turn ids: %w", err)
		}
		arg = string(b)
	}
	rows, err := r.query(ctx, tx, snap, messagesQuery(r.dialect), arg)
	if err != nil {
		return r.wrap("read current-turn messages", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var n int64
		var probe sql.NullString
		if err := rows.Scan(&n, &probe); err != nil {
			return r.wrap("read current-turn messages", err)
		}
		if n < 0 || n >= int64(len(owner)) {
			return r.wrap("read current-turn messages", fmt.Errorf("turn position %d of %d", n, len(owner)))
		}
		if !probe.Valid {
			continue
		}
		i := owner[n]
		msgs, err := r.decodeMessages(snap, probe.String)
		if err != nil {
			return r.wrap("read current-turn messages", err)
		}
		for _, m := range msgs {
			if m.Meta.Kind == authority.Malformed {
				snap.Malformed = append(snap.Malformed, RowRef{Table: "task_session_messages", ID: m.ID})
				sessions[i].MalformedMetadata = true
			}
		}
		sessions[i].Messages = msgs
	}
	if err := rows.Err(); err != nil {
		return r.wrap("read current-turn messages", err)
	}
	return nil
}

// decodeMessages reads one turn's probe: [newest plain agent updated_at,
// its type, [[id, author, type, content, metadata, created_at,
// updated_at]…]].
func (r *Reader) decodeMessages(snap *Snapshot, probe string) ([]Message, error) {
	v, err := parseProbe(probe)
	if err == nil && len(v.arr) != 3 {
		err = errors.New("want 3 fields")
	}
	if err != nil {
		return nil, fmt.Errorf("decode messages %.200q: %w", probe, err)
	}
	var out []Message
	if at := v.arr[0].str; at != nil {
		m := Message{Author: "agent", UpdatedAt: parseStamp(snap, at), Type: deref(v.arr[1].str)}
		out = append(out, m)
	}
	rows, err := v.arr[2].stringLists()
	if err != nil {
		return nil, fmt.Errorf("decode messages: %w", err)
	}
	for _, a := range rows {
		if len(a) != 7 || a[0] == nil {
			return nil, fmt.Errorf("decode messages: want 7 fields")
		}
		m := Message{ID: *a[0], Meta: authority.ParseMetadata(r.dialect, a[4]),
			CreatedAt: parseStamp(snap, a[5]), UpdatedAt: parseStamp(snap, a[6])}
		m.Author, m.Type, m.Content = deref(a[1]), deref(a[2]), deref(a[3])
		out = append(out, m)
	}
	return out, nil
}
