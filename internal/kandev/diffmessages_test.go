package kandev_test

import (
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/kandevtime"
	"github.com/watchdogd/watchdogd/internal/model"
)

// The differential's check of the current turn's messages, and the rules'
// view of a message it rests on.

// plainUpdate is a message the newest-activity aggregate ranks.
func plainUpdate(author, typ string) bool {
	return author == "agent" && typ != "status" && typ != "script_execution"
}

// rowOfItsOwn is a message the messages statement returns as a row of its
// own: whole, or, for a user's, its id, type and creation.
func rowOfItsOwn(author, typ string) bool {
	return !plainUpdate(author, typ) && author == "agent" || typ == "clarification_request" || typ == "permission_request" || author == "user"
}

// checkMessages compares the current turn's messages as the snapshot read
// them with the rows: the newest plain agent update (its instant, and a
// type among the rows at that instant) and the rows returned whole.
func checkMessages(t *testing.T, d authority.Dialect, ds kandevdb.Dataset, s model.Session) {
	t.Helper()
	if s.Current == nil {
		if len(s.Messages) > 0 {
			t.Errorf("%s session %s: messages without a current turn", d, s.ID)
		}
		return
	}
	newest, types := newestPlain(ds, s.Current.ID)
	whole := map[string]bool{}
	for _, m := range ds.Messages {
		if m.TurnID == s.Current.ID && rowOfItsOwn(m.Author, m.Type) {
			whole[m.ID] = true
		}
	}
	var got model.Message
	for _, m := range s.Messages {
		if m.ID != "" && rowOfItsOwn(m.Author, m.Type) {
			if !whole[m.ID] {
				t.Errorf("%s session %s: message %s read, not on the current turn or not one the rules read", d, s.ID, m.ID)
			}
			delete(whole, m.ID)
		}
		if plainUpdate(m.Author, m.Type) && m.UpdatedAt.After(got.UpdatedAt) {
			got = m
		}
	}
	if len(whole) > 0 {
		t.Errorf("%s session %s: messages %v not read", d, s.ID, whole)
	}
	if !got.UpdatedAt.Equal(newest) || !newest.IsZero() && !types[got.Type] {
		t.Errorf("%s session %s: newest agent update %v %q, want %v, one of %v\nmessages: %+v", d, s.ID, got.UpdatedAt, got.Type, newest, types, s.Messages)
	}
}

// newestPlain returns the instant of a turn's newest plain agent updates
// and their types.
func newestPlain(ds kandevdb.Dataset, turnID string) (time.Time, map[string]bool) {
	var newest time.Time
	types := map[string]bool{}
	for _, m := range ds.Messages {
		if m.TurnID != turnID || !plainUpdate(m.Author, m.Type) {
			continue
		}
		at, _ := kandevtime.Parse(m.UpdatedAt)
		if at.After(newest) {
			newest, types = at, map[string]bool{}
		}
		if at.Equal(newest) {
			types[m.Type] = true
		}
	}
	return newest, types
}
