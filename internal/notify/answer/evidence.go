package answer

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/watchdogd/watchdogd/internal/model"
)

// Bundle is what a read of kandev shows of a question bundle.
type Bundle struct {
	// Seen: its rows are in the read (they are on the session's current
	// turn).
	Seen bool
	// Pending: one of its rows still waits for an answer.
	Pending bool
	// Recorded is the answer kandev wrote into its rows, when they hold
	// one, one per question.
	Recorded []model.Answer
	// Labels names the options of its questions, by question and option
	// id, for saying what someone else answered.
	Labels map[string]string
}

// BundleIn reads bundle pendingID of a session from a snapshot: its rows
// on the session's current turn, their status, and the response kandev
// records in each answered row's metadata.
func BundleIn(snap *model.Snapshot, sessionID, pendingID string) Bundle {
	b := Bundle{Labels: map[string]string{}}
	s := sessionIn(snap, sessionID)
	if s == nil {
		return b
	}
	for _, m := range s.Messages {
		if m.Type != "clarification_request" {
			continue
		}
		if pid, _ := m.Meta.String("pending_id"); pid != pendingID {
			continue
		}
		b.Seen = true
		if st, ok := m.Meta.String("status"); !ok || st == "" || st == "pending" {
			b.Pending = true
		}
		labels(m, b.Labels)
		if raw, ok := m.Meta.Raw("response"); ok {
			var a model.Answer
			if json.Unmarshal([]byte(raw), &a) == nil && a.QuestionID != "" {
				b.Recorded = append(b.Recorded, a)
			}
		}
	}
	return b
}

// labels adds a row's question's option labels to l.
func labels(m model.Message, l map[string]string) {
	raw, ok := m.Meta.Raw("question")
	if !ok {
		return
	}
	var q struct {
		ID      string `json:"id"`
		Options []struct {
			ID    string `json:"option_id"`
			Label string `json:"label"`
		} `json:"options"`
	}
	if json.Unmarshal([]byte(raw), &q) != nil {
		return
	}
	qid, _ := m.Meta.String("question_id")
	if qid == "" {
		qid = q.ID
	}
	for _, o := range q.Options {
		l[qid+"\x00"+o.ID] = model.Cut(o.Label, model.MaxOptionText)
	}
}

// Judgement is what a read shows of an answer watchdogd may have sent.
type Judgement int

// The judgements.
const (
	// Unknown: the read shows no answer to go by (the bundle's turn is
	// no longer current, or its rows hold no response).
	Unknown Judgement = iota
	// Waiting: the bundle still waits for an answer; none landed.
	Waiting
	// Ours: kandev recorded this very answer.
	Ours
	// Theirs: kandev recorded another answer: someone answered first.
	Theirs
)

// Judge says what a read shows of our answer: kandev recorded it, or
// another one, or the bundle still waits, or the read cannot tell.
// Answers are the same when they name the same options (in any order)
// and the same text (trimmed) for each question.
func Judge(b Bundle, ours []model.Answer) Judgement {
	switch {
	case !b.Seen:
		return Unknown
	case b.Pending:
		return Waiting
	case len(b.Recorded) == 0:
		return Unknown
	case Same(b.Recorded, ours):
		return Ours
	}
	return Theirs
}

// Same says whether two answers to a bundle are the same answer.
func Same(a, b []model.Answer) bool {
	if len(a) != len(b) {
		return false
	}
	norm := func(x model.Answer) string {
		opts := slices.Clone(x.Options)
		slices.Sort(opts)
		return x.QuestionID + "\x00" + strings.Join(opts, "\x00") + "\x00" + strings.TrimSpace(x.Text)
	}
	as, bs := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		as[i], bs[i] = norm(a[i]), norm(b[i])
	}
	slices.Sort(as)
	slices.Sort(bs)
	return slices.Equal(as, bs)
}

// Words says an answer for people, by the labels a bundle's rows give its
// options ("lib/pq"; a text in quotes).
func Words(as []model.Answer, l map[string]string) string {
	var out []string
	for _, a := range as {
		var w []string
		for _, o := range a.Options {
			w = append(w, cmpOr(l[a.QuestionID+"\x00"+o], o))
		}
		if t := strings.TrimSpace(a.Text); t != "" {
			w = append(w, "“"+model.Cut(t, model.MaxOptionText)+"”")
		}
		out = append(out, strings.Join(w, " "))
	}
	return strings.Join(out, "; ")
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Permission is what a read of kandev shows of a permission request.
type Permission struct {
	// Seen: its row is in the read (on the session's current turn).
	Seen bool
	// Pending: its row still waits for an answer; Status is the row's
	// status otherwise.
	Pending bool
	Status  string
}

// PermissionIn reads permission pendingID of a session from a snapshot.
func PermissionIn(snap *model.Snapshot, sessionID, pendingID string) Permission {
	var p Permission
	s := sessionIn(snap, sessionID)
	if s == nil {
		return p
	}
	for _, m := range s.Messages {
		if m.Type != "permission_request" {
			continue
		}
		pid, ok := m.Meta.String("pending_id")
		if !ok || pid == "" {
			pid = m.ID // as scan names a permission without one
		}
		if pid != pendingID {
			continue
		}
		p.Seen = true
		st, ok := m.Meta.String("status")
		p.Pending, p.Status = !ok || st == "" || st == "pending", st
	}
	return p
}

func sessionIn(snap *model.Snapshot, id string) *model.Session {
	if snap == nil {
		return nil
	}
	for i := range snap.Sessions {
		if snap.Sessions[i].ID == id {
			return &snap.Sessions[i]
		}
	}
	return nil
}
