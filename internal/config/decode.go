package config

import (
	"encoding"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Problem is one thing wrong with a config file, where it is.
type Problem struct {
	Line  int
	Field string
	Msg   string
}

// Problems are all of a file's problems, reported at once.
type Problems struct {
	File  string
	Items []Problem
}

func (p *Problems) Error() string {
	lines := make([]string, len(p.Items))
	for i, it := range p.Items {
		lines[i] = p.format(it)
	}
	return strings.Join(lines, "\n")
}

func (p *Problems) format(it Problem) string {
	if it.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s", p.File, it.Line, it.Field, it.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", p.File, it.Field, it.Msg)
}

// Lines returns each problem as "file:line: field: problem".
func (p *Problems) Lines() []string {
	out := make([]string, len(p.Items))
	for i, it := range p.Items {
		out[i] = p.format(it)
	}
	return out
}

// scalar is a config type read from one YAML scalar (a time of day, an
// instant): encoding's TextUnmarshaler, so that a type defined elsewhere
// (internal/model) reads itself.
type scalar = encoding.TextUnmarshaler

// decoder walks a YAML tree into Go values strictly: unknown keys, wrong
// types and bad values are problems with line numbers, all collected.
type decoder struct {
	problems []Problem
	// warnings are true of a valid config that will not do what it reads
	// like (ladderWarnings).
	warnings []Problem
	// failed holds paths that could not be decoded: validation says
	// nothing more about them (one problem, not a cascade).
	failed map[string]bool
	lines  map[string]int // field path → line, for validation messages
	getenv func(string) string
	// merged caches each mapping's keys with its merge keys expanded (nil
	// while being expanded, to catch a mapping that merges itself), and
	// mergedFrom the mappings it merges.
	merged     map[*yaml.Node][][2]*yaml.Node
	mergedFrom map[*yaml.Node][]*yaml.Node
	// faulty holds the anchored mappings, lists and values (and merge
	// sources) whose decoding produced problems (see aliases.go).
	faulty map[*yaml.Node]bool
	// visits counts the nodes and keys walked, aliases and merge keys
	// expanded: the work a file costs. nodes is the file's size in YAML
	// nodes (0: not bounded); past its budget decoding stops, with one
	// problem (see aliases.go).
	visits, nodes int
	overBudget    bool
	// at is the line of the node being decoded (0 outside decoding): where
	// a panic of a library reading a value is reported.
	at int
	// via is the outermost alias being expanded (line 0: none).
	via place
}

// place is where in the file, and which field.
type place struct {
	line int
	path string
}

func (d *decoder) envSet(name string) bool { return d.getenv != nil && d.getenv(name) != "" }

func (d *decoder) add(line int, field, format string, args ...any) {
	if d.failed == nil {
		d.failed = map[string]bool{}
	}
	d.failed[field] = true
	d.problems = append(d.problems, Problem{Line: line, Field: field, Msg: oneLine(fmt.Sprintf(format, args...))})
}

// oneLine keeps a problem to one line of check-config's output, even when
// a library's error repeats a value with a line break in it (cron does).
func oneLine(msg string) string {
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(msg)
}

// failedAt reports whether path or one of its parents already failed.
func (d *decoder) failedAt(path string) bool {
	for p := path; p != ""; p = parentPath(p) {
		if d.failed[p] {
			return true
		}
	}
	return false
}

func parentPath(p string) string {
	if i := strings.LastIndexAny(p, ".["); i >= 0 {
		return p[:i]
	}
	return ""
}

var (
	durationType = reflect.TypeOf(time.Duration(0))
	scalarType   = reflect.TypeOf((*scalar)(nil)).Elem()
)

// decode decodes n into v, noting n's line in d.at while it does (not
// restored by a defer, so that a panic leaves the line where it came), and
// the outermost alias being expanded in d.via.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	d.visits++
	if d.spent(n, path) {
		return
	}
	outer, outerVia := d.at, d.via
	if n.Kind == yaml.AliasNode {
		if d.via.line == 0 {
			d.via = place{line: n.Line, path: path}
		}
		n = n.Alias
	}
	d.at = n.Line
	d.decodeNode(n, v, path)
	d.at, d.via = outer, outerVia
}

func (d *decoder) decodeNode(n *yaml.Node, v reflect.Value, path string) {
	if d.faulty[n] {
		d.skip(n, path)
		return
	}
	if n.Anchor != "" {
		defer d.noteFaults(n, len(d.problems))
	}
	d.lines[path] = n.Line
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" && v.Kind() != reflect.String {
		return // "key:" with no value keeps the default
	}
	if v.CanAddr() && v.Addr().Type().Implements(scalarType) {
		if n.Kind != yaml.ScalarNode {
			d.add(n.Line, path, "want a single value, got %s", kindName(n))
			return
		}
		if err := v.Addr().Interface().(scalar).UnmarshalText([]byte(n.Value)); err != nil {
			d.add(n.Line, path, "%v", err)
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(n, v.Elem(), path)
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Map:
		d.decodeMap(n, v, path)
	case reflect.Slice:
		d.decodeSlice(n, v, path)
	default:
		d.decodeScalar(n, v, path)
	}
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.add(n.Line, fieldName(path), "want a mapping, got %s", kindName(n))
		return
	}
	fields := map[string]int{}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]; tag != "" && tag != "-" {
			fields[tag] = i
		}
	}
	kvs, ok := d.mergedPairs(n, path)
	if !ok {
		return
	}
	defer d.noteMergeFaults(n, len(d.problems))
	seen := map[string]bool{}
	for _, kv := range kvs {
		if d.overBudget {
			return
		}
		d.visits++
		k, val := kv[0], kv[1]
		p := join(path, k.Value)
		if seen[k.Value] {
			d.add(k.Line, p, "set twice")
			continue
		}
		seen[k.Value] = true
		idx, ok := fields[k.Value]
		if !ok {
			d.add(k.Line, p, "unknown field (known: %s)", known(fields))
			continue
		}
		d.decode(val, v.Field(idx), p)
		d.lines[p] = k.Line
	}
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.add(n.Line, fieldName(path), "want a mapping, got %s", kindName(n))
		return
	}
	kvs, ok := d.mergedPairs(n, path)
	if !ok {
		return
	}
	defer d.noteMergeFaults(n, len(d.problems))
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	for _, kv := range kvs {
		if d.overBudget {
			return
		}
		d.visits++
		k, val := kv[0], kv[1]
		p := join(path, k.Value)
		elem := reflect.New(v.Type().Elem()).Elem()
		key := reflect.ValueOf(k.Value).Convert(v.Type().Key()) // a string, or a string type (model.Kind)
		if existing := v.MapIndex(key); existing.IsValid() {
			d.add(k.Line, p, "set twice")
			continue
		}
		d.decode(val, elem, p)
		d.lines[p] = k.Line
		v.SetMapIndex(key, elem)
	}
}

func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.add(n.Line, fieldName(path), "want a list, got %s", kindName(n))
		return
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		if d.overBudget {
			return
		}
		d.decode(item, out.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(out)
}

func (d *decoder) decodeScalar(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode {
		d.add(n.Line, path, "want a single value, got %s", kindName(n))
		return
	}
	s := n.Value
	switch {
	case v.Type() == durationType:
		dur, err := time.ParseDuration(s)
		if err != nil {
			d.add(n.Line, path, "%q is not a duration (like 90s, 15m, 1h30m)", s)
			return
		}
		v.SetInt(int64(dur))
	case v.Kind() == reflect.String:
		if n.Tag == "!!null" {
			return
		}
		v.SetString(s)
	case v.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil || n.Tag != "!!bool" {
			d.add(n.Line, path, "%q is not true or false", s)
			return
		}
		v.SetBool(b)
	case v.Kind() == reflect.Int:
		i, err := strconv.Atoi(s)
		if err != nil || n.Tag != "!!int" {
			d.add(n.Line, path, "%q is not a whole number", s)
			return
		}
		v.SetInt(int64(i))
	default:
		d.add(n.Line, path, "unsupported field type %s", v.Type())
	}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

func join(path, key string) string {
	if key == "" {
		key = `""`
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func fieldName(path string) string {
	if path == "" {
		return "(top level)"
	}
	return path
}

func known(fields map[string]int) string {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// yamlErrLine and yamlErrMsg split yaml.v3's "yaml: line N: msg".
func yamlErrLine(err error) int {
	var line int
	if _, e := fmt.Sscanf(err.Error(), "yaml: line %d:", &line); e == nil {
		return line
	}
	return 0
}

func yamlErrMsg(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "line ") {
		return msg[i+2:]
	}
	return msg
}
