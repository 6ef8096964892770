package kandevtime

import (
	"testing"
	"time"
)

func TestParseShapes(t *testing.T) {
	want := time.Date(2026, 8, 22, 10, 0, 0, 123456789, time.UTC)
	whole := time.Date(2026, 8, 22, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2026-08-22 10:00:00.123456789+00:00", want, true}, // mattn/go-sqlite3
		{"2026-08-22 10:00:00.1234567+00:00", want.Truncate(100 * time.Nanosecond), true},
		{"2026-08-22 10:00:00+00:00", whole, true},     // whole seconds: fraction absent
		{"2026-08-22 10:00:00", whole, true},           // CURRENT_TIMESTAMP
		{"2026-08-22T10:00:00Z", whole, true},          // RFC 3339
		{"2026-08-22T10:00:00.123456789Z", want, true}, // RFC 3339 with fraction
		{"2026-08-22T12:00:00+02:00", whole, true},     // offset
		{"2026-08-22T05:30:00-04:30", whole, true},     // negative offset
		{"2026-08-22 10:00:00 +0000", whole, true},     // spaced numeric zone
		{"2026-08-22 10:00:00.5", whole.Add(500 * time.Millisecond), true},
		{"2024-02-29 00:00:00", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), true},
		{"2026-02-29 00:00:00", time.Time{}, false}, // not a leap year
		{"2026-08-22", time.Time{}, false},
		{"2026-08-22 25:00:00", time.Time{}, false},
		{"2026-08-22 10:00:00.", time.Time{}, false},
		{"2026-08-22 10:00:00.1234567890", time.Time{}, false}, // 10 digits
		{"2026-08-22 10:00:00+25:00", time.Time{}, false},
		{"2026-08-22 10:00:00 UTC", time.Time{}, false},
		{"yesterday", time.Time{}, false},
		{"", time.Time{}, false},
	}
	for _, c := range cases {
		got, ok := Parse(c.in)
		if ok != c.ok || !got.Equal(c.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestFormats(t *testing.T) {
	at := time.Date(2026, 8, 22, 10, 0, 0, 500000000, time.FixedZone("x", 3600))
	if got := Format(at); got != "2026-08-22 09:00:00.5+00:00" {
		t.Errorf("Format = %q", got)
	}
	if got := RFC3339(at); got != "2026-08-22T09:00:00.5Z" {
		t.Errorf("RFC3339 = %q", got)
	}
	if a, b := Canonical(at), Canonical(at.Add(time.Nanosecond)); a >= b {
		t.Errorf("Canonical does not order: %q !< %q", a, b)
	}
}

// reference parses with the standard library, shape by shape.
func reference(s string) (time.Time, bool) {
	for _, layout := range []string{
		"2006-01-02 15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999",
		"2006-01-02 15:04:05.999999999 -0700", "2006-01-02T15:04:05.999999999-0700",
		"2006-01-02 15:04:05.999999999-0700", "2006-01-02 15:04:05.999999999 Z07:00",
	} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// FuzzParse holds the hand-written parser to the standard library on every
// input both accept, and checks it never panics and round-trips.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"2026-08-22 10:00:00.123456789+00:00", "2026-08-22 10:00:00", "2026-08-22T10:00:00Z",
		"2026-08-22T12:00:00+02:00", "2024-02-29 23:59:59.9-01:30", "2026-13-01 00:00:00", "0000-01-01T00:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := Parse(s)
		if !ok {
			return
		}
		if back, ok2 := Parse(Format(got)); !ok2 || !back.Equal(got.Truncate(time.Microsecond)) {
			t.Fatalf("Parse(%q) = %v does not round-trip through Format (%q)", s, got, Format(got))
		}
		if ref, rok := reference(s); rok && !ref.Equal(got) {
			t.Fatalf("Parse(%q) = %v, the standard library says %v", s, got, ref)
		}
	})
}
