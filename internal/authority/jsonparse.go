package authority

import (
	"strings"
	"unicode/utf8"
)

// sqliteMaxDepth is SQLite's JSON_MAX_DEPTH: deeper nesting is invalid JSON
// to json_valid().
const sqliteMaxDepth = 1000

// parser is a strict RFC 8259 reader with the two dialects' differences:
// SQLite accepts lone surrogate escapes and invalid UTF-8 and limits nesting
// to 1000; PostgreSQL rejects \u0000, unpaired surrogates and numbers outside
// its numeric range. A hand-written reader (rather than encoding/json) is what
// lets the Go rule follow each dialect exactly; the differential fuzz tests
// hold it to the real databases.
type parser struct {
	s string
	i int
	d Dialect
}

func (p *parser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// topObject reads the top-level object and keeps its members.
func (p *parser) topObject() ([]member, bool) {
	p.i++ // '{'
	var fields []member
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return fields, true
	}
	for {
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, false
		}
		key, ok := p.str()
		if !ok {
			return nil, false
		}
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.ws()
		v, ok := p.value(1)
		if !ok {
			return nil, false
		}
		fields = append(fields, member{key: key, val: v})
		p.ws()
		if p.i >= len(p.s) {
			return nil, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return fields, true
		default:
			return nil, false
		}
	}
}

// value reads one JSON value at nesting depth (the number of containers
// already open around it).
func (p *parser) value(depth int) (Value, bool) {
	if p.i >= len(p.s) {
		return Value{}, false
	}
	start := p.i
	switch c := p.s[p.i]; {
	case c == '"':
		s, ok := p.str()
		return Value{kind: 's', raw: p.s[start:p.i], str: s}, ok
	case c == '{' || c == '[':
		if p.d == SQLite && depth+1 > sqliteMaxDepth {
			return Value{}, false
		}
		if !p.container(depth + 1) {
			return Value{}, false
		}
		return Value{kind: c, raw: p.s[start:p.i]}, true
	case c == '-' || (c >= '0' && c <= '9'):
		if !p.number() {
			return Value{}, false
		}
		raw := p.s[start:p.i]
		if p.d == Postgres && !pgNumericInRange(raw) {
			return Value{}, false
		}
		return Value{kind: 'n', raw: raw}, true
	case strings.HasPrefix(p.s[p.i:], "true"):
		p.i += 4
		return Value{kind: 't', raw: "true"}, true
	case strings.HasPrefix(p.s[p.i:], "false"):
		p.i += 5
		return Value{kind: 'f', raw: "false"}, true
	case strings.HasPrefix(p.s[p.i:], "null"):
		p.i += 4
		return Value{kind: 'z', raw: "null"}, true
	}
	return Value{}, false
}

// container skips an object or array whose opening bracket is at p.i.
func (p *parser) container(depth int) bool {
	open := p.s[p.i]
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	p.i++
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == closer {
		p.i++
		return true
	}
	for {
		p.ws()
		if open == '{' {
			if p.i >= len(p.s) || p.s[p.i] != '"' {
				return false
			}
			if _, ok := p.str(); !ok {
				return false
			}
			p.ws()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return false
			}
			p.i++
			p.ws()
		}
		if _, ok := p.value(depth); !ok {
			return false
		}
		p.ws()
		if p.i >= len(p.s) {
			return false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case closer:
			p.i++
			return true
		default:
			return false
		}
	}
}

func (p *parser) number() bool {
	s, i := p.s, p.i
	if s[i] == '-' {
		i++
	}
	if i >= len(s) {
		return false
	}
	if s[i] == '0' {
		i++
	} else if s[i] >= '1' && s[i] <= '9' {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	} else {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		n := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == n {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		n := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == n {
			return false
		}
	}
	p.i = i
	return true
}

// str reads a string whose opening quote is at p.i and returns it decoded.
func (p *parser) str() (string, bool) {
	p.i++
	start := p.i
	// Fast path: no escapes.
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '"' {
			out := p.s[start:p.i]
			p.i++
			if p.d == Postgres && !utf8.ValidString(out) {
				return "", false
			}
			return out, true
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", false
		}
		p.i++
	}
	var b strings.Builder
	b.WriteString(p.s[start:p.i])
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			out := b.String()
			if p.d == Postgres && !utf8.ValidString(out) {
				return "", false
			}
			return out, true
		case c < 0x20:
			return "", false
		case c != '\\':
			b.WriteByte(c)
			p.i++
			continue
		}
		if !p.escape(&b) {
			return "", false
		}
	}
	return "", false
}

// escape decodes the backslash escape at p.i into b.
func (p *parser) escape(b *strings.Builder) bool {
	if p.i+1 >= len(p.s) {
		return false
	}
	e := p.s[p.i+1]
	p.i += 2
	switch e {
	case '"', '\\', '/':
		b.WriteByte(e)
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		r, ok := p.hex4()
		return ok && p.unicodeEscape(b, r)
	default:
		return false
	}
	return true
}

// unicodeEscape writes the rune of a \u escape whose four hex digits were
// just read, following the dialect's surrogate and NUL rules.
func (p *parser) unicodeEscape(b *strings.Builder, r rune) bool {
	switch {
	case r == 0 && p.d == Postgres:
		return false // 22P05: \u0000 cannot be converted to text
	case r >= 0xD800 && r <= 0xDBFF:
		if strings.HasPrefix(p.s[p.i:], `\u`) {
			save := p.i
			p.i += 2
			lo, ok := p.hex4()
			if ok && lo >= 0xDC00 && lo <= 0xDFFF {
				b.WriteRune(0x10000 + (r-0xD800)<<10 + (lo - 0xDC00))
				return true
			}
			if !ok {
				return false
			}
			p.i = save
		}
		if p.d == Postgres {
			return false
		}
		b.WriteRune(utf8.RuneError)
	case r >= 0xDC00 && r <= 0xDFFF:
		if p.d == Postgres {
			return false
		}
		b.WriteRune(utf8.RuneError)
	default:
		b.WriteRune(r)
	}
	return true
}

func (p *parser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(p.s[p.i : p.i+4]) {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}
