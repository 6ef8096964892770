package kandev

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/kandevsql"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// What a snapshot reads past the current turns, for what a kandev restart
// leaves (docs/architecture.md, "Restarts"): a fixed number of statements
// more, run only when a session needs them.

// idsArg is a list of ids as the dialect's statements take it: a JSON array
// on SQLite, a text[] on PostgreSQL.
func (r *Reader) idsArg(ids []string) (any, error) {
	if r.dialect == authority.Postgres {
		return ids, nil
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("encode ids: %w", err)
	}
	return string(b), nil
}

// bootTurn is one turn of a session SessionTurnsOf read.
type bootTurn struct {
	rule                        authority.Turn
	nullID                      bool
	started, completed, updated stamp
	messages                    int64
	msgs                        []model.Message
	read, boot, malformed       bool
}

// readBeforeBoot sets, for each session whose current turn is a boot turn
// (scan.BootTurn), its newest turn that is not one (BeforeBoot): the rule
// (authority.Resolve) over the session's turns with its boot turns left
// out. Two statements: the sessions' turns, with each one's message count;
// then the messages (kandevsql.Messages) of the turns that may be boot
// turns — closed, one message — and of the rule's answer without them; the
// messages say which are.
func (r *Reader) readBeforeBoot(ctx context.Context, tx *sql.Tx, snap *model.Snapshot, sessions []model.Session, limit string) error {
	var owners []int
	var ids []string
	for i := range sessions {
		if s := &sessions[i]; scan.BootTurn(s.Current, s.Messages) {
			owners, ids = append(owners, i), append(ids, s.ID)
		}
	}
	if len(owners) == 0 {
		return nil
	}
	turns, err := r.sessionTurnsOf(ctx, tx, snap, ids)
	if err != nil {
		return err
	}
	// The turns to read: each session's one-message closed turns and the
	// rule's answer without them, as pseudo-sessions readMessages fills.
	var reading []model.Session
	var at [][2]int // session's place in owners, turn's place in turns[k]
	for k, i := range owners {
		cur := sessions[i].Current
		var rest []int
		for j := range turns[k] {
			t := &turns[k][j]
			switch {
			case !t.nullID && t.rule.ID == cur.ID:
				t.boot = true // the current turn: a boot turn
			case t.rule.Open() || t.messages != 1 || t.nullID:
				rest = append(rest, j)
			default:
				t.read = true
			}
		}
		if j := newestOf(r.dialect, turns[k], rest); j >= 0 && !turns[k][j].nullID {
			turns[k][j].read = true
		}
		for j, t := range turns[k] {
			if t.read {
				reading = append(reading, model.Session{Current: &model.Turn{ID: t.rule.ID}})
				at = append(at, [2]int{k, j})
			}
		}
	}
	if err := r.readMessages(ctx, tx, snap, reading, limit); err != nil {
		return err
	}
	for n, p := range reading {
		t := &turns[at[n][0]][at[n][1]]
		t.msgs = p.Messages
		t.messages = int64(p.Current.MessageCount) // all of them; the statement counted to two
		t.boot = scan.BootTurn(&model.Turn{ID: t.rule.ID, MessageCount: p.Current.MessageCount}, p.Messages)
		t.malformed = p.MalformedMetadata
	}
	for k, i := range owners {
		var rest []int
		for j, t := range turns[k] {
			if !t.boot {
				rest = append(rest, j)
			}
		}
		j := newestOf(r.dialect, turns[k], rest)
		if j < 0 {
			continue
		}
		t, s := turns[k][j], &sessions[i]
		row := model.TurnRowOf(t.rule.ID, t.nullID, s.ID)
		s.BeforeBoot = &model.Turn{ID: t.rule.ID, NullID: t.nullID, Open: t.rule.Open(), StartedAt: t.started.time(snap, row),
			CompletedAt: t.completed.time(snap, row), MessageCount: int(t.messages)}
		if !s.BeforeBoot.Open {
			s.BeforeBoot.UpdatedAt = t.updated.time(snap, row)
		}
		s.BeforeBootMessages = t.msgs
		s.MalformedMetadata = s.MalformedMetadata || t.malformed
	}
	return nil
}

// newestOf is the rule's current turn among turns[idx…], as an index of
// turns; -1 when none.
func newestOf(d authority.Dialect, turns []bootTurn, idx []int) int {
	rule := make([]authority.Turn, len(idx))
	for n, j := range idx {
		rule[n] = turns[j].rule
	}
	if res := authority.Resolve(d, rule); res.Current >= 0 {
		return idx[res.Current]
	}
	return -1
}

// sessionTurnsOf runs kandevsql.SessionTurnsOf: every turn of each session
// named, by the session's place in ids.
func (r *Reader) sessionTurnsOf(ctx context.Context, tx *sql.Tx, snap *model.Snapshot, ids []string) ([][]bootTurn, error) {
	arg, err := r.idsArg(ids)
	if err != nil {
		return nil, err
	}
	rows, err := r.query(ctx, tx, snap, kandevsql.SessionTurnsOf(r.dialect), arg)
	if err != nil {
		return nil, r.wrap("read the turns of sessions resumed", err)
	}
	defer func() { _ = rows.Close() }()
	out := make([][]bootTurn, len(ids))
	for rows.Next() {
		var n int64
		var id, meta sql.NullString
		var created stamp
		var t bootTurn
		if err := rows.Scan(&n, &id, &t.started, &created, &t.completed, &t.updated, &meta, &t.messages); err != nil {
			return nil, r.wrap("read the turns of sessions resumed", err)
		}
		if n < 0 || n >= int64(len(ids)) {
			return nil, r.wrap("read the turns of sessions resumed", fmt.Errorf("session position %d of %d", n, len(ids)))
		}
		t.nullID = !id.Valid
		t.rule = authority.Turn{ID: id.String, StartedAt: t.started.authority(), CreatedAt: created.authority(),
			CompletedAt: t.completed.authority(), Metadata: nullPtr(meta), HasMessages: t.messages > 0}
		out[n] = append(out[n], t)
	}
	if err := rows.Err(); err != nil {
		return nil, r.wrap("read the turns of sessions resumed", err)
	}
	return out, nil
}

// readReplies sets, on each session's judged turn that a restart may have
// abandoned (scan.MayBeAbandoned), the newest creation of a plain agent row
// that is no question or permission (model.Turn.RepliedAt): one statement,
// run only when such a turn exists. A creation after notAfter cannot be
// true and is left out.
func (r *Reader) readReplies(ctx context.Context, tx *sql.Tx, snap *model.Snapshot, sessions []model.Session, limit string, notAfter time.Time) error {
	var turns []*model.Turn
	var ids []string
	for i := range sessions {
		if t, _ := scan.Judged(sessions[i]); t != nil && !t.NullID && scan.MayBeAbandoned(sessions[i], r.stallAfter) {
			turns, ids = append(turns, t), append(ids, t.ID)
		}
	}
	if len(turns) == 0 {
		return nil
	}
	arg, err := r.idsArg(ids)
	if err != nil {
		return err
	}
	rows, err := r.query(ctx, tx, snap, kandevsql.Replies(r.dialect), arg, limit)
	if err != nil {
		return r.wrap("read replies after a restart", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var n int64
		var newest stamp
		var probe sql.NullString
		dest := []any{&n, &newest}
		if r.dialect == authority.SQLite {
			dest = []any{&n, &probe}
		}
		if err := rows.Scan(dest...); err != nil {
			return r.wrap("read replies after a restart", err)
		}
		if n < 0 || n >= int64(len(turns)) {
			return r.wrap("read replies after a restart", fmt.Errorf("turn position %d of %d", n, len(turns)))
		}
		var others []string
		if probe.Valid {
			var v []json.RawMessage
			var made *string
			if json.Unmarshal([]byte(probe.String), &v) != nil || len(v) != 2 || json.Unmarshal(v[0], &made) != nil || json.Unmarshal(v[1], &others) != nil {
				return r.wrap("read replies after a restart", fmt.Errorf("decode %.200q", probe.String))
			}
			if made != nil {
				newest = stamp{valid: true, text: *made}
			}
		}
		t := turns[n]
		row := model.RowRef{Table: "task_session_messages", Of: "newest reply, turn " + t.ID}
		t.RepliedAt = newest.time(snap, row)
		for _, text := range others {
			at := stamp{valid: true, text: text}.time(snap, row)
			if at.After(t.RepliedAt) && (notAfter.IsZero() || !at.After(notAfter)) {
				t.RepliedAt = at
			}
		}
	}
	if err := rows.Err(); err != nil {
		return r.wrap("read replies after a restart", err)
	}
	return nil
}
