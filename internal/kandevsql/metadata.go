package kandevsql

import (
	"fmt"
	"strings"

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/model"
)

// The statements' side of the bound on agent-written values (bound.go):
// message metadata larger than wholeMetadata is read apart, as a smaller
// JSON object built by the database, so that the large value never crosses
// into watchdogd whole. The object holds the members metaMembers names,
// and inside the question the fields questionMembers and optionMembers
// name, each found as the dialect finds it: by its exact key, the dialect
// choosing among duplicates (SQLite the first, PostgreSQL the last, as
// authority.Metadata.Get), and written as the raw text names it (see
// cutObject), which authority.Metadata.Flag tests. Scalars stay as they were
// (PostgreSQL's jsonb writes numbers as it normalises them, which its flag
// reading does too), strings are cut to readText characters, other objects
// and arrays are left empty, and a question keeps its first MaxOptions+1
// options. Malformed metadata comes back as '' and a value that is not an
// object as 'null', which read as the same Kind.
//
// A question read whole is decoded by encoding/json, which also takes a
// field's name in another case, and the last of duplicates: only a
// question over 64 KiB written with such keys reads differently cut.

// messageMetadata is the messages statement's metadata column and the
// key to read it apart by when it is too big to read whole: NULL and that
// key (the row's rowid on SQLite, whose ids may be NULL; its id on
// PostgreSQL) when it holds more than wholeMetadata bytes, else the column
// and NULL. octet_length reads a stored value's size without reading the
// value, on both dialects; on SQLite it counts every byte, those after a
// NUL included.
func messageMetadata(d authority.Dialect) (meta, key string) {
	small := fmt.Sprintf("octet_length(m.metadata) <= %d", wholeMetadata)
	if d == authority.SQLite {
		return "CASE WHEN " + small + " THEN CAST(m.metadata AS TEXT) END", "CASE WHEN NOT " + small + " THEN CAST(m.rowid AS TEXT) END"
	}
	return "CASE WHEN " + small + " THEN m.metadata END", "CASE WHEN NOT " + small + " THEN m.id END"
}

// metaKey is one member the cut metadata keeps: kind 'v' a value, 'q' the
// question object, 'o' its options list, 'p' a permission's options list;
// a string is cut to readText characters, or to read when set.
type metaKey struct {
	name string
	kind byte
	read int
}

// metaMembers are the members of a message's metadata that the rules and
// outputs read (internal/scan: Meta.String, Meta.Flag, Meta.Raw). A rule
// that reads another member must add it here: metadata larger than
// wholeMetadata keeps only these.
func metaMembers() []metaKey {
	return []metaKey{{"status", 'v', 0}, {"pending_id", 'v', 0}, {"question_id", 'v', 0}, {"tool_call_id", 'v', 0},
		{"action_visibility", 'v', 0}, {"script_type", 'v', 0}, {"is_resuming", 'v', 0}, {"question_index", 'v', 0},
		{"parent_question", 'v', 0}, {"agent_disconnected", 'v', 0}, {"cancelled", 'v', 0}, {"question", 'q', 0}, {"request_id", 'v', 0},
		{"options", 'p', 0}}
}

// questionMembers and optionMembers are the fields internal/scan decodes
// from a question and from each of its options.
func questionMembers() []metaKey {
	return []metaKey{{"id", 'v', 0}, {"title", 'v', 0}, {"prompt", 'v', 0}, {"options", 'o', 0}}
}

func optionMembers() []metaKey {
	return []metaKey{{"option_id", 'v', 0}, {"label", 'v', readOptionText}, {"description", 'v', readOptionText}}
}

// permissionOptionMembers are the fields internal/scan decodes from each
// of a permission request's options (the buttons a click answers with).
func permissionOptionMembers() []metaKey {
	return []metaKey{{"option_id", 'v', 0}, {"name", 'v', readOptionText}, {"kind", 'v', 0}}
}

// jsonOps are a dialect's JSON expressions for cutObject, at a location
// (SQLite: a JSON path into one text; PostgreSQL: a jsonb expression).
type jsonOps struct {
	child func(at, key string) string               // the location of member key of at
	has   func(at string) string                    // a value is at this location
	is    func(at, typ string) string               // it is an "object" or an "array"
	value func(at string, n int) string             // it as JSON text, a string cut to n
	list  func(at string, members []metaKey) string // the options list at this location, each cut to members
	raw   func(key string) string                   // the metadata's text names the key
}

// cutObject is the object at at, as JSON text, holding the members it
// has: one expression, with no subquery but the options list's, so that a
// big value is read and parsed once (see BigMetadataSQLite). At the
// top (spell), a member's key is written as the metadata's text writes it
// where that matters: plainly when the text names it so, else with an
// escape, as authority.Metadata.Flag tests the text for the plain key.
func cutObject(o jsonOps, at string, members []metaKey, spell bool) string {
	parts := make([]string, 0, len(members))
	for _, m := range members {
		child := o.child(at, m.name)
		n := m.read
		if n == 0 {
			n = readText
		}
		val := o.value(child, n)
		switch m.kind {
		case 'q':
			val = fmt.Sprintf("CASE WHEN %s THEN %s ELSE %s END", o.is(child, "object"), cutObject(o, child, questionMembers(), false), val)
		case 'o':
			val = fmt.Sprintf("CASE WHEN %s THEN %s ELSE %s END", o.is(child, "array"), o.list(child, optionMembers()), val)
		case 'p':
			val = fmt.Sprintf("CASE WHEN %s THEN %s ELSE %s END", o.is(child, "array"), o.list(child, permissionOptionMembers()), val)
		}
		key := `'"` + m.name + `":'`
		if spell {
			key = fmt.Sprintf(`CASE WHEN %s THEN %s ELSE '"\u%04x%s":' END`, o.raw(m.name), key, m.name[0], m.name[1:])
		}
		parts = append(parts, fmt.Sprintf("CASE WHEN %s THEN %s || %s || ',' ELSE '' END", o.has(child), key, val))
	}
	return "'{' || rtrim(" + strings.Join(parts, "\n   || ") + ", ',') || '}'"
}

// sqliteOps reads the JSON text x by path: a location is an SQL text
// expression holding a JSON path. Every lookup goes through the parse of x
// that SQLite keeps for the statement.
func sqliteOps(x string) jsonOps {
	var o jsonOps
	o.child = func(at, key string) string {
		if strings.HasSuffix(at, "'") {
			return at[:len(at)-1] + "." + key + "'"
		}
		return "(" + at + " || '." + key + "')"
	}
	o.has = func(at string) string { return fmt.Sprintf("json_type(%s, %s) IS NOT NULL", x, at) }
	o.is = func(at, typ string) string { return fmt.Sprintf("json_type(%s, %s) = '%s'", x, at, typ) }
	o.value = func(at string, n int) string {
		return fmt.Sprintf(`CASE json_type(%[1]s, %[2]s) WHEN 'text' THEN json_quote(substr(%[1]s ->> %[2]s, 1, %[3]d))
        WHEN 'object' THEN '{}' WHEN 'array' THEN '[]' ELSE %[1]s -> %[2]s END`, x, at, n)
	}
	// The options are looked up by index: json_each does not use that
	// parse, and iterating x (or a text copy of the list) with it parses
	// them again. An object is taken out once, as JSONB, which the JSON
	// functions read as it is, without a parse (jsonb_extract gives any
	// other value as an SQL value).
	o.list = func(at string, members []metaKey) string {
		el := "(" + at + " || '[' || e.k || ']')"
		return fmt.Sprintf(`'[' || COALESCE((SELECT group_concat(CASE WHEN %[1]s THEN %[2]s ELSE %[3]s END, ',' ORDER BY e.k)
        FROM (SELECT i.key AS k, jsonb_extract(%[4]s, %[5]s || '[' || i.key || ']') AS b FROM json_each('%[6]s') i
          WHERE i.key < json_array_length(%[4]s, %[5]s)) e), '') || ']'`,
			o.is(el, "object"), cutObject(sqliteOps("e.b"), "'$'", members, false), o.value(el, readOptionText), x, at, indexes(model.MaxOptions+1))
	}
	o.raw = func(key string) string { return fmt.Sprintf(`instr(%s, '"%s"') > 0`, x, key) }
	return o
}

// indexes is the JSON array [0, 1, … n-1].
func indexes(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, i)
	}
	b.WriteByte(']')
	return b.String()
}

// BigMetadataSQLite reads one message's metadata, by rowid, cut. It
// runs once per such message: SQLite parses the value in this process,
// and keeps the text and its parse until the statement ends, so one
// statement for several would hold several.
//
// The column is named at every use rather than selected once in a
// subquery: SQLite then reads the value and parses it once for all its
// JSON functions, where a subquery's column is a copy per use. What it
// builds is small: an option's text is cut to 76 characters before the
// concatenations copy it (measured: see the appendix of docs/benchmarks.md).
// json_valid guards every other JSON function, so no value fails the
// statement.
func BigMetadataSQLite() string {
	const x = "CAST(m.metadata AS TEXT)"
	return fmt.Sprintf(`SELECT CASE WHEN NOT json_valid(%[1]s) THEN '' WHEN json_type(%[1]s) <> 'object' THEN 'null' ELSE %[2]s END
FROM task_session_messages m WHERE m.rowid = ?1`, x, cutObject(sqliteOps(x), "'$'", metaMembers(), true))
}

// postgresOps reads jsonb expressions; raw is the metadata column.
func postgresOps(raw string) jsonOps {
	return jsonOps{
		child: func(at, key string) string { return fmt.Sprintf("(%s -> '%s')", at, key) },
		has:   func(at string) string { return at + " IS NOT NULL" },
		is:    func(at, typ string) string { return fmt.Sprintf("jsonb_typeof(%s) = '%s'", at, typ) },
		value: func(at string, n int) string {
			return fmt.Sprintf(`CASE jsonb_typeof(%[1]s) WHEN 'string' THEN to_json(left(%[1]s #>> '{}', %[2]d))::text
        WHEN 'object' THEN '{}' WHEN 'array' THEN '[]' ELSE %[1]s::text END`, at, n)
		},
		list: func(at string, members []metaKey) string {
			o := postgresOps(raw)
			return fmt.Sprintf(`'[' || COALESCE((SELECT string_agg(CASE WHEN jsonb_typeof(o.value) = 'object' THEN %[1]s ELSE %[2]s END, ',' ORDER BY o.n)
        FROM jsonb_array_elements(%[3]s) WITH ORDINALITY o(value, n) WHERE o.n <= %[4]d), '') || ']'`,
				cutObject(o, "o.value", members, false), o.value("o.value", readOptionText), at, model.MaxOptions+1)
		},
		raw: func(key string) string { return fmt.Sprintf(`strpos(%s, '"%s"') > 0`, raw, key) },
	}
}

// BigMetadataPostgres reads the metadata of the messages whose ids
// are its parameter, cut. Without IS JSON (PostgreSQL 16) nothing tells
// malformed text from JSON but a cast, which fails the whole statement:
// the messages statement casts nothing, and the rare values too big to read
// whole are cast here (see readBigMetadata). The lateral subquery casts
// each value once (OFFSET 0 keeps it from being inlined into every use); a
// malformed one fails the statement with SQLSTATE class 22 or 54001.
func BigMetadataPostgres() string {
	return fmt.Sprintf(`SELECT m.id, CASE WHEN jsonb_typeof(b.j) <> 'object' THEN 'null' ELSE %s END
FROM task_session_messages m CROSS JOIN LATERAL (SELECT m.metadata::jsonb AS j OFFSET 0) b
WHERE m.id = ANY($1::text[])`, cutObject(postgresOps("m.metadata"), "b.j", metaMembers(), true))
}
