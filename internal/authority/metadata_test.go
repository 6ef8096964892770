package authority

import (
	"strings"
	"testing"
)

// TestFlagValues pins D12's normalisation value by value, per dialect. Each
// row is the JSON text of the member value in {"k": <value>}.
func TestFlagValues(t *testing.T) {
	cases := []struct {
		value          string
		sqlite, pgMode bool
		why            string
	}{
		{`true`, true, true, "JSON true"},
		{`1`, true, true, "the number 1"},
		{`"true"`, true, true, "the string true"},
		{`"1"`, true, true, "the string 1"},
		{`"\u0031"`, true, true, "an escaped string decodes to 1 in both"},
		{`"tru\u0065"`, true, true, "an escaped string decodes to true in both"},
		{`false`, false, false, "JSON false"},
		{`null`, false, false, "JSON null"},
		{`0`, false, false, "the number 0"},
		{`1.0`, false, false, "1.0 prints as 1.0 in both"},
		{`""`, false, false, "empty string"},
		{`"false"`, false, false, "the string false"},
		{`"0"`, false, false, "the string 0"},
		{`"yes"`, false, false, "yes is not a flag value"},
		{`"TRUE"`, false, false, "case matters"},
		{`" true"`, false, false, "whitespace matters"},
		{`{}`, false, false, "objects are not flags"},
		{`[]`, false, false, "arrays are not flags"},
		{`["1"]`, false, false, "an array holding 1 is not 1"},
		{`-1`, false, false, "minus one"},
		// Cross-dialect divergences: numbers print differently.
		{`1e0`, false, true, "SQLite reads 1e0 as the real 1.0; jsonb prints 1"},
		{`1E+0`, false, true, "as 1e0"},
		{`0.1e1`, false, true, "jsonb keeps no scale: 1"},
		{`10e-1`, false, false, "jsonb keeps scale 1: 1.0"},
		{`100e-2`, false, false, "jsonb prints 1.00"},
	}
	for _, c := range cases {
		meta := `{"k": ` + c.value + `}`
		if got := ParseMetadataText(SQLite, meta).Flag("k"); got != c.sqlite {
			t.Errorf("SQLite mode %s = %v, want %v (%s)", c.value, got, c.sqlite, c.why)
		}
		if got := ParseMetadataText(Postgres, meta).Flag("k"); got != c.pgMode {
			t.Errorf("PostgreSQL mode %s = %v, want %v (%s)", c.value, got, c.pgMode, c.why)
		}
	}
}

// TestMetadataKinds pins what each dialect can parse.
func TestMetadataKinds(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	cases := []struct {
		text           string
		sqlite, pgMode Kind
		why            string
	}{
		{``, Malformed, Malformed, "empty text is not JSON"},
		{`   `, Malformed, Malformed, "blank text is not JSON"},
		{`{"k": true`, Malformed, Malformed, "truncated"},
		{`{k: 1}`, Malformed, Malformed, "JSON5 keys are not RFC 8259"},
		{`{"k": 1,}`, Malformed, Malformed, "trailing comma"},
		{"{\"k\": \"a\x01\"}", Malformed, Malformed, "raw control character in a string"},
		{`{"k": "\x"}`, Malformed, Malformed, "unknown escape"},
		{"\ufeff{}", Malformed, Malformed, "byte order mark"},
		{"{}\v", Malformed, Malformed, "vertical tab is not JSON whitespace"},
		{`[1]`, NotObject, NotObject, "an array"},
		{`"s"`, NotObject, NotObject, "a string"},
		{`null`, NotObject, NotObject, "JSON null (not SQL NULL)"},
		{` {} `, Object, Object, "whitespace around an object"},
		{`{"k": "\ud800"}`, Object, Malformed, "lone surrogate: SQLite accepts, jsonb rejects"},
		{`{"k": "\u0000"}`, Object, Malformed, `\u0000: jsonb cannot convert it to text (22P05)`},
		{`{"k": 1e131072}`, Object, Malformed, "outside numeric's weight range (22003)"},
		{`{"k": 1e-16384}`, Object, Malformed, "outside numeric's scale range (22003)"},
		{`{"k": 1e131071}`, Object, Object, "just inside numeric's range"},
		{"{\"k\": 1}\x00garbage", Object, Malformed, "SQLite stops at NUL"},
		{deep(1000), NotObject, NotObject, "SQLite's depth limit is 1000"},
		{deep(1001), Malformed, NotObject, "one deeper than SQLite allows"},
	}
	for _, c := range cases {
		if got := ParseMetadataText(SQLite, c.text).Kind; got != c.sqlite {
			t.Errorf("SQLite mode %q kind %d, want %d (%s)", short(c.text), got, c.sqlite, c.why)
		}
		if got := ParseMetadataText(Postgres, c.text).Kind; got != c.pgMode {
			t.Errorf("PostgreSQL mode %q kind %d, want %d (%s)", short(c.text), got, c.pgMode, c.why)
		}
	}
}

// TestDuplicateKeys pins the duplicate-key divergence: SQLite's json_extract
// returns the first member, jsonb keeps the last.
func TestDuplicateKeys(t *testing.T) {
	meta := `{"lifecycle_only": true, "lifecycle_only": false}`
	if !ParseMetadataText(SQLite, meta).Flag(KeyLifecycleOnly) {
		t.Error("SQLite mode: first duplicate (true) should win")
	}
	if ParseMetadataText(Postgres, meta).Flag(KeyLifecycleOnly) {
		t.Error("PostgreSQL mode: last duplicate (false) should win")
	}
	// The cheap text test before the JSON parse is part of the rule on
	// every path: a key spelled with escapes (kandev never writes one) is
	// not a flag, though the JSON member exists.
	escaped := `{"lifecycle\u005fonly": "1"}`
	for _, d := range []Dialect{SQLite, Postgres} {
		m := ParseMetadataText(d, escaped)
		if v, ok := m.String(KeyLifecycleOnly); !ok || v != "1" {
			t.Errorf("%s mode: the escaped key names the member", d)
		}
		if m.Flag(KeyLifecycleOnly) {
			t.Errorf("%s mode: an escaped key passed the text test", d)
		}
	}
}

func TestNullMetadata(t *testing.T) {
	f, kind := TurnFlags(SQLite, nil)
	if kind != Null || f != (Flags{}) {
		t.Fatalf("NULL metadata: flags %+v kind %d", f, kind)
	}
}

func short(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
