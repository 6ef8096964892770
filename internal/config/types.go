package config

import (
	"fmt"
	"io"
	"time"
)

// Timestamp is an RFC 3339 instant in the config (silences' until).
type Timestamp struct{ time.Time }

// UnmarshalText reads an RFC 3339 instant.
func (t *Timestamp) UnmarshalText(b []byte) error {
	s := string(b)
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return fmt.Errorf("%q is not an RFC 3339 time (like 2026-12-01T09:00:00Z)", s)
	}
	t.Time = v
	return nil
}

// Secret is a token or password read from a file or the environment. It
// prints as a placeholder so that it cannot reach a log line by accident.
type Secret string

// String hides the value.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "<redacted>"
}

// GoString hides the value from %#v.
func (s Secret) GoString() string { return `config.Secret("<redacted>")` }

// Format hides the value from every fmt verb: a Stringer alone is bypassed
// by verbs that do not apply to strings (%d prints "%!d(config.Secret=…)"
// with the raw value).
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, s.GoString())
		return
	}
	_, _ = io.WriteString(f, s.String())
}

// MarshalJSON hides the value from JSON output.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"<redacted>"`), nil }

// Reveal returns the value, for the one call that sends it.
func (s Secret) Reveal() string { return string(s) }
