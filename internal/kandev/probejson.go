package kandev

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// The snapshot's statements return their probes as JSON built by the
// database: arrays whose leaves are strings or nulls. Decoding them with
// encoding/json's reflection cost more client CPU than the statements took
// on the server at scale, so this reader parses exactly that grammar and
// nothing else. Any other JSON value (number, boolean, object) is an error,
// as it is for encoding/json decoding into *string; strings with escapes,
// control bytes or invalid UTF-8 are handed to encoding/json, so decoded
// text is byte-for-byte what encoding/json would produce (FuzzProbeJSON).

// jval is a decoded value: a string, a null (zero jval) or an array.
type jval struct {
	str   *string
	arr   []jval
	isArr bool
}

var errProbeJSON = errors.New("probe JSON: unexpected input")

// parseProbe decodes one probe value.
func parseProbe(s string) (jval, error) {
	p := probeParser{s: s}
	v, err := p.value(0)
	if err != nil {
		return jval{}, err
	}
	p.space()
	if p.i != len(p.s) {
		return jval{}, fmt.Errorf("%w: trailing data at offset %d", errProbeJSON, p.i)
	}
	return v, nil
}

type probeParser struct {
	s string
	i int
}

func (p *probeParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value parses a string, null or array; depth bounds nesting (probes nest
// three deep at most).
func (p *probeParser) value(depth int) (jval, error) {
	p.space()
	if p.i >= len(p.s) {
		return jval{}, fmt.Errorf("%w: unexpected end", errProbeJSON)
	}
	switch p.s[p.i] {
	case '"':
		str, err := p.str()
		return jval{str: &str}, err
	case 'n':
		if len(p.s)-p.i >= 4 && p.s[p.i:p.i+4] == "null" {
			p.i += 4
			return jval{}, nil
		}
	case '[':
		if depth < 8 {
			return p.array(depth)
		}
	}
	return jval{}, fmt.Errorf("%w at offset %d", errProbeJSON, p.i)
}

func (p *probeParser) array(depth int) (jval, error) {
	p.i++ // '['
	out := jval{isArr: true}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return out, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return jval{}, err
		}
		out.arr = append(out.arr, v)
		p.space()
		if p.i >= len(p.s) {
			return jval{}, fmt.Errorf("%w: unterminated array", errProbeJSON)
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return out, nil
		default:
			return jval{}, fmt.Errorf("%w at offset %d", errProbeJSON, p.i)
		}
	}
}

// str reads a string token. Plain ones (no escape, no control byte, valid
// UTF-8) are sliced out; the rest go through encoding/json.
func (p *probeParser) str() (string, error) {
	start := p.i
	p.i++ // opening quote
	plain := true
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			tok := p.s[start:p.i]
			if plain && utf8.ValidString(tok) {
				return tok[1 : len(tok)-1], nil
			}
			var out string
			if err := json.Unmarshal([]byte(tok), &out); err != nil {
				return "", fmt.Errorf("probe JSON string at offset %d: %w", start, err)
			}
			return out, nil
		case c == '\\':
			plain = false
			p.i += 2
		case c < 0x20:
			plain = false
			p.i++
		default:
			p.i++
		}
	}
	return "", fmt.Errorf("%w: unterminated string", errProbeJSON)
}

// strings reads v as an array of strings and nulls, as encoding/json fills
// a []*string: null is a nil slice.
func (v jval) strings() ([]*string, error) {
	if !v.isArr {
		if v.str != nil {
			return nil, fmt.Errorf("%w: want an array, got a string", errProbeJSON)
		}
		return nil, nil
	}
	out := make([]*string, len(v.arr))
	for i, e := range v.arr {
		if e.isArr {
			return nil, fmt.Errorf("%w: want a string, got an array", errProbeJSON)
		}
		out[i] = e.str
	}
	return out, nil
}

// stringLists reads v as an array of such arrays ([][]*string).
func (v jval) stringLists() ([][]*string, error) {
	if !v.isArr {
		if v.str != nil {
			return nil, fmt.Errorf("%w: want an array, got a string", errProbeJSON)
		}
		return nil, nil
	}
	out := make([][]*string, len(v.arr))
	for i, e := range v.arr {
		a, err := e.strings()
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}
