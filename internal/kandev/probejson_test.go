package kandev

import (
	"encoding/json"
	"reflect"
	"testing"
)

// probeSeeds are shapes the statements build, and the edges of the grammar.
var probeSeeds = []string{
	`null`, `[]`, `[null]`, `["a"]`, `[["a",null,"2026-01-02 03:04:05","x","1"]]`,
	`[ [ "a" , null ] , [] , null ]`, `["tab\there", "quote\"", "\u00e9\ud83d\ude00", "\ud800"]`,
	`["a",1]`, `[true]`, `[{}]`, `"s"`, `["a"] x`, `["unterminated`, `[`, `["a",]`, `[,]`,
	"[\"raw\x01control\"]", "[\"bad utf8 \xff\"]", `[["a"],"b"]`, `[[[]]]`, `nul`, `[nullx]`,
	`["2026-01-02T03:04:05.123+00:00",null,[["m1","agent","status","c","{\"k\":1}",null,"t"]]]`,
}

// TestProbeJSON: each seed decodes as encoding/json decodes it into the
// probe's Go types, or fails where it fails.
func TestProbeJSON(t *testing.T) {
	for _, s := range probeSeeds {
		checkProbeJSON(t, s)
	}
}

// FuzzProbeJSON: on any input the probe reader agrees with encoding/json —
// same values when it succeeds, an error when it fails.
func FuzzProbeJSON(f *testing.F) {
	for _, s := range probeSeeds {
		f.Add(s)
	}
	f.Fuzz(checkProbeJSON)
}

func checkProbeJSON(t *testing.T, s string) {
	var wantOne []*string
	errOne := json.Unmarshal([]byte(s), &wantOne)
	var wantList [][]*string
	errList := json.Unmarshal([]byte(s), &wantList)

	v, err := parseProbe(s)
	var gotOne []*string
	var gotList [][]*string
	errGotOne, errGotList := err, err
	if err == nil {
		gotOne, errGotOne = v.strings()
		gotList, errGotList = v.stringLists()
	}
	if (errOne == nil) != (errGotOne == nil) {
		t.Fatalf("%q as []*string: encoding/json err=%v, probe reader err=%v", s, errOne, errGotOne)
	}
	if errOne == nil && !reflect.DeepEqual(wantOne, gotOne) {
		t.Fatalf("%q as []*string: encoding/json %v, probe reader %v", s, show(wantOne), show(gotOne))
	}
	if (errList == nil) != (errGotList == nil) {
		t.Fatalf("%q as [][]*string: encoding/json err=%v, probe reader err=%v", s, errList, errGotList)
	}
	if errList == nil && !reflect.DeepEqual(wantList, gotList) {
		t.Fatalf("%q as [][]*string: values differ", s)
	}
}

func show(a []*string) []any {
	out := make([]any, len(a))
	for i, p := range a {
		if p != nil {
			out[i] = *p
		}
	}
	return out
}
