package model

import "time"

// DropFuture reads every timestamp of the snapshot later than limit as
// missing, and lists its row in Future. Such a value cannot be true: kandev
// writes some columns with SQL's CURRENT_TIMESTAMP, which on PostgreSQL is
// the wall time of its database role's time zone, hours ahead of UTC east of
// Greenwich. Taken as the agent's last output it would hide a stall for
// those hours. The caller sets limit to the scan's instant plus a
// tolerance for clocks that differ a little.
func (s *Snapshot) DropFuture(limit time.Time) {
	drop := func(t *time.Time, row func() RowRef) {
		if t.After(limit) {
			*t = time.Time{}
			s.Future = append(s.Future, row())
		}
	}
	for i := range s.Sessions {
		ss := &s.Sessions[i]
		drop(&ss.StartedAt, func() RowRef { return RowRef{Table: "task_sessions", ID: ss.ID} })
		s.dropTurn(ss.ID, ss.Current, ss.Messages, drop)
		s.dropTurn(ss.ID, ss.BeforeBoot, ss.BeforeBootMessages, drop)
	}
}

// dropTurn applies drop to a turn's timestamps and its messages'.
func (s *Snapshot) dropTurn(session string, cur *Turn, msgs []Message, drop func(*time.Time, func() RowRef)) {
	if cur == nil {
		return
	}
	turn := func() RowRef { return TurnRowOf(cur.ID, cur.NullID, session) }
	drop(&cur.StartedAt, turn)
	drop(&cur.CompletedAt, turn)
	drop(&cur.UpdatedAt, turn)
	for j := range msgs {
		m := &msgs[j]
		row := func() RowRef {
			if m.Aggregate() {
				return RowRef{Table: "task_session_messages", Of: "newest update, turn " + cur.ID}
			}
			return MessageRow(*m, cur.ID)
		}
		drop(&m.CreatedAt, row)
		drop(&m.UpdatedAt, row)
	}
}
