package scan

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
)

// TestPermissionOptions: a pending permission's finding carries what
// answering it in kandev takes — its request id and its options, each
// with kandev's name for people — read as far as the row allows.
func TestPermissionOptions(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, c := range []struct {
		name, metadata string
		wantID         string
		want           []PermissionOption
	}{
		{"kandev's shape",
			`{"pending_id":"p1","request_id":"r1","options":[{"option_id":"o1","name":"Allow once","kind":"allow_once"},{"option_id":"o2","name":"Reject","kind":"reject_once"}]}`,
			"r1", []PermissionOption{{ID: "o1", Name: "Allow once", Kind: "allow_once"}, {ID: "o2", Name: "Reject", Kind: "reject_once"}}},
		{"no options: no buttons, the finding still holds", `{"pending_id":"p1","request_id":"r1"}`, "r1", nil},
		{"options not a list", `{"pending_id":"p1","request_id":"r1","options":"allow"}`, "r1", nil},
		{"an option without an id cannot be chosen", `{"pending_id":"p1","options":[{"name":"Allow"},{"option_id":"o2","name":"` + long + `"}]}`,
			"", []PermissionOption{{ID: "o2", Name: model.Cut(long, model.MaxOptionText)}}},
	} {
		m := permissionReq("p1", "pending", 20*time.Minute)
		m.Meta = meta(c.metadata)
		rep := Findings(&model.Snapshot{Sessions: []model.Session{session("WAITING_FOR_INPUT", time.Hour, m)}}, Options{}, now)
		if len(rep.Findings) != 1 || rep.Findings[0].Kind != model.KindPendingPermission {
			t.Fatalf("%s: findings %+v", c.name, rep.Findings)
		}
		d := rep.Findings[0].Detail
		if d.PermissionRequestID != c.wantID || !reflect.DeepEqual(d.PermissionOptions, c.want) {
			t.Errorf("%s: request %q options %+v, want %q %+v", c.name, d.PermissionRequestID, d.PermissionOptions, c.wantID, c.want)
		}
	}
}
