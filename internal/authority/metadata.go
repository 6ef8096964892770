package authority

import (
	"strings"
)

// Kind says what a metadata column held.
type Kind uint8

const (
	// Null is SQL NULL: no metadata at all. Not malformed; kandev's own
	// queries read it as "no flags".
	Null Kind = iota
	// Malformed is text the dialect cannot parse as JSON ('' and blank
	// included). kandev's own queries fail on such a row; watchdogd reads it
	// as "no flags set" (D12) and counts it.
	Malformed
	// NotObject is valid JSON whose top level is not an object: no flags.
	NotObject
	// Object is a JSON object; its top-level members are readable.
	Object
)

// Metadata is one metadata column read the way a dialect reads it: the
// top-level members of a JSON object, after the dialect's duplicate-key rule
// (SQLite: the first wins; PostgreSQL's jsonb: the last wins).
type Metadata struct {
	Kind    Kind
	dialect Dialect
	fields  []member
	raw     string
}

type member struct {
	key string
	val Value
}

// Value is one top-level member value.
type Value struct {
	kind byte   // 's' string, 'n' number, 't' true, 'f' false, 'z' null, '{' object, '[' array
	raw  string // the value's JSON text
	str  string // decoded, for strings
}

// ParseMetadata reads a metadata column (nil for SQL NULL).
func ParseMetadata(d Dialect, raw *string) Metadata {
	if raw == nil {
		return Metadata{Kind: Null, dialect: d}
	}
	return parseText(d, *raw)
}

// ParseMetadataText reads non-NULL metadata text.
func ParseMetadataText(d Dialect, raw string) Metadata { return parseText(d, raw) }

func parseText(d Dialect, s string) Metadata {
	m := parse(d, s)
	m.raw = s
	return m
}

func parse(d Dialect, s string) Metadata {
	if d == SQLite {
		// SQLite's JSON functions read text as a C string: a NUL byte ends it.
		if i := strings.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
	}
	p := parser{s: s, d: d}
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '{' {
		fields, ok := p.topObject()
		if ok {
			p.ws()
			if p.i == len(p.s) {
				return Metadata{Kind: Object, dialect: d, fields: fields}
			}
		}
		return Metadata{Kind: Malformed, dialect: d}
	}
	if _, ok := p.value(0); ok {
		p.ws()
		if p.i == len(p.s) {
			return Metadata{Kind: NotObject, dialect: d}
		}
	}
	return Metadata{Kind: Malformed, dialect: d}
}

// Get returns the member value for key after the dialect's duplicate rule.
func (m Metadata) Get(key string) (Value, bool) {
	if m.dialect == SQLite {
		for _, f := range m.fields {
			if f.key == key {
				return f.val, true
			}
		}
		return Value{}, false
	}
	for i := len(m.fields) - 1; i >= 0; i-- {
		if m.fields[i].key == key {
			return m.fields[i].val, true
		}
	}
	return Value{}, false
}

// Flag is D12's normalisation: true exactly when the member is JSON
// true, the number 1 as the dialect prints it, or the string "true" or "1".
// Everything else, and every metadata that is not a JSON object, is false.
// Like FlagSQL, it first requires the quoted key in the raw text.
func (m Metadata) Flag(key string) bool {
	if !strings.Contains(m.raw, `"`+key+`"`) {
		return false
	}
	v, ok := m.Get(key)
	if !ok {
		return false
	}
	switch v.kind {
	case 't':
		return true
	case 's':
		return v.str == "true" || v.str == "1"
	case 'n':
		if m.dialect == SQLite {
			// json_extract returns integers as integers and every other
			// number as a real, which CAST(... AS TEXT) prints with ".0".
			return v.raw == "1"
		}
		return pgNumericIsOne(v.raw)
	}
	return false
}

// String returns a string member's decoded value; ok is false when the member
// is absent or not a JSON string.
func (m Metadata) String(key string) (string, bool) {
	v, ok := m.Get(key)
	if !ok || v.kind != 's' {
		return "", false
	}
	return v.str, true
}

// Raw returns a member's JSON text, for nested values decoded elsewhere.
func (m Metadata) Raw(key string) (string, bool) {
	v, ok := m.Get(key)
	if !ok {
		return "", false
	}
	return v.raw, true
}

// Flags are the three turn flags the rule reads.
type Flags struct {
	DispatchPending, DispatchAttempted, LifecycleOnly bool
}

// TurnFlags reads the rule's flags from a turn's metadata column.
func TurnFlags(d Dialect, raw *string) (Flags, Kind) {
	m := ParseMetadata(d, raw)
	return Flags{
		DispatchPending:   m.Flag(KeyDispatchPending),
		DispatchAttempted: m.Flag(KeyDispatchAttempted),
		LifecycleOnly:     m.Flag(KeyLifecycleOnly),
	}, m.Kind
}
