package kandevdb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// ResolutionCase is one case of testdata/current_turn_resolution.json, in the
// shape {name, turns, expected_current_turn_id} plus optional fields.
type ResolutionCase struct {
	Name  string        `json:"name"`
	Turns []FixtureTurn `json:"turns"`
	// ExpectedCurrentTurnID is nil when no current turn resolves (D8).
	ExpectedCurrentTurnID *string `json:"expected_current_turn_id"`
	// ExpectedKandev is released kandev's answer; Set is false when the case
	// does not say.
	ExpectedKandev OptionalID `json:"expected_kandev_turn_id"`
}

// OptionalID distinguishes an absent field from null.
type OptionalID struct {
	Set bool
	ID  *string
}

// UnmarshalJSON records that the field was present.
func (o *OptionalID) UnmarshalJSON(b []byte) error {
	o.Set = true
	return json.Unmarshal(b, &o.ID)
}

// FixtureTurn is one turn of a case.
type FixtureTurn struct {
	ID          string
	StartedAt   string
	CreatedAt   *string
	CompletedAt *string
	// Metadata is the column text: metadata_raw when given (nil = SQL NULL),
	// else the compact text of metadata, else "{}".
	Metadata *string
	// Messages is how many messages reference the turn.
	Messages int
}

// UnmarshalJSON reads a turn, keeping metadata_raw's null apart from absence
// and metadata's number spellings (1.0 stays 1.0).
func (t *FixtureTurn) UnmarshalJSON(b []byte) error {
	var f map[string]json.RawMessage
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	str := func(k string, dst any) error {
		if v, ok := f[k]; ok {
			if err := json.Unmarshal(v, dst); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
		return nil
	}
	if err := errors.Join(str("id", &t.ID), str("started_at", &t.StartedAt), str("created_at", &t.CreatedAt),
		str("completed_at", &t.CompletedAt), str("messages", &t.Messages)); err != nil {
		return err
	}
	if t.ID == "" || t.StartedAt == "" {
		return errors.New("a turn needs id and started_at")
	}
	if raw, ok := f["metadata_raw"]; ok {
		return json.Unmarshal(raw, &t.Metadata)
	}
	text := "{}"
	if m, ok := f["metadata"]; ok {
		var buf bytes.Buffer
		if err := json.Compact(&buf, m); err != nil {
			return fmt.Errorf("metadata: %w", err)
		}
		text = buf.String()
	}
	t.Metadata = &text
	return nil
}

// LoadResolutionCases reads the shared fixture. A missing, unreadable or
// empty file is an error: a fixture that silently stops being read is
// indistinguishable from implementations that agree.
func LoadResolutionCases(path string) ([]ResolutionCase, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read fixture: %w", err)
	}
	var f struct {
		Cases []ResolutionCase `json:"cases"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("parse fixture %s: %w", path, err)
	}
	if len(f.Cases) == 0 {
		return nil, fmt.Errorf("fixture %s has no cases", path)
	}
	return f.Cases, nil
}

// Dataset builds one task and one RUNNING session holding the case's turns,
// with ids prefixed so that many cases can share a database. Each turn gets
// its messages as plain agent rows.
func (c ResolutionCase) Dataset(prefix string) Dataset {
	task, session := prefix+"task", prefix+"session"
	ds := Dataset{
		Tasks:    []Task{{ID: task, WorkspaceID: "ws", Title: c.Name, Metadata: P("{}")}},
		Sessions: []Session{{ID: session, TaskID: task, State: "RUNNING", IsPrimary: true, StartedAt: P("2026-08-22 00:00:00+00:00")}},
	}
	for _, t := range c.Turns {
		created := t.CreatedAt
		ds.Turns = append(ds.Turns, Turn{ID: prefix + t.ID, SessionID: session, TaskID: task, StartedAt: t.StartedAt,
			CreatedAt: created, CompletedAt: t.CompletedAt, Metadata: t.Metadata})
		for i := 0; i < t.Messages; i++ {
			ds.Messages = append(ds.Messages, Message{ID: fmt.Sprintf("%s%s-m%d", prefix, t.ID, i), SessionID: session, TaskID: task,
				TurnID: prefix + t.ID, Author: "agent", Type: "message", Metadata: P("{}"), CreatedAt: t.StartedAt})
		}
	}
	return ds
}
