package kandev_test

import (
	"strings"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

// chosenSeed is a hand-made input of FuzzSnapshotAgainstRule with the shape
// it must decode to: the generator's layout may change, and a seed that no
// longer builds what its name says would go on passing while it tested
// something else. The layout (diffDataset, mixedValues): sessions − 1; per
// session its task's metadata, state and turn count; per turn its id,
// started_at, created_at (6: none), completion (0 open, 1 at its start, 2
// at the fourth stamp), metadata and message count; per message its
// updated_at, author, type and metadata.
type chosenSeed struct {
	name  string
	input []byte
	holds func(ds kandevdb.Dataset) bool
}

var chosenSeeds = []chosenSeed{
	{"one session, one open turn", []byte{0, 0, 0, 1, 0, 0, 6, 0, 1, 0},
		func(ds kandevdb.Dataset) bool { return len(ds.Turns) == 1 && ds.Turns[0].CompletedAt == nil }},
	{"a session with no turns (D8)", []byte{0, 0, 0, 0},
		func(ds kandevdb.Dataset) bool { return len(ds.Sessions) == 1 && len(ds.Turns) == 0 }},
	{"an open turn under a newer lifecycle turn", []byte{0, 0, 0, 2, 0, 0, 6, 0, 1, 1, 0, 0, 0, 0, 1, 3, 6, 1, 2, 0},
		func(ds kandevdb.Dataset) bool {
			return len(ds.Turns) == 2 && ds.Turns[0].CompletedAt == nil && hasMeta(ds.Turns[1], `"lifecycle_only": true`) &&
				ds.Turns[1].StartedAt > ds.Turns[0].StartedAt
		}},
	{"a tie on started_at and created_at, broken by id", []byte{0, 0, 0, 3, 0, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 2, 0, 2, 1, 1, 0},
		func(ds kandevdb.Dataset) bool {
			if len(ds.Turns) != 3 {
				return false
			}
			a, b := ds.Turns[0], ds.Turns[1]
			return a.StartedAt == b.StartedAt && a.CreatedAt != nil && b.CreatedAt != nil && *a.CreatedAt == *b.CreatedAt
		}},
	{"two open turns", []byte{0, 0, 0, 2, 0, 0, 6, 0, 1, 0, 1, 3, 6, 0, 1, 0},
		func(ds kandevdb.Dataset) bool {
			return len(ds.Turns) == 2 && ds.Turns[0].CompletedAt == nil && ds.Turns[1].CompletedAt == nil
		}},
	{"dispatch pending with no message, and a malformed value", []byte{0, 0, 0, 2, 0, 0, 6, 0, 7, 0, 1, 3, 6, 1, 12, 0},
		func(ds kandevdb.Dataset) bool {
			return len(ds.Turns) == 2 && len(ds.Messages) == 0 && hasMeta(ds.Turns[0], `"prompt_dispatch_pending": true`) &&
				ds.Turns[1].Metadata != nil && *ds.Turns[1].Metadata == "{"
		}},
}

func hasMeta(tu kandevdb.Turn, part string) bool {
	return tu.Metadata != nil && strings.Contains(*tu.Metadata, part)
}
