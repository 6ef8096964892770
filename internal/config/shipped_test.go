package config

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

const defaultsFile = "../../config/watchdogd.yaml"

// TestDefaultsFileIsTheDefaults: config/watchdogd.yaml runs exactly as an
// empty file does, so that a copy of it, as a start, turns nothing on (no
// quiet hours, no silence, no route) that the user did not write.
func TestDefaultsFileIsTheDefaults(t *testing.T) {
	got, err := Load(defaultsFile, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Parse("empty.yaml", nil, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	got.File, want.File = "", ""
	got.lines, want.lines = nil, nil // where the file set each key, as File
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("%s is not the defaults:\n got %s\nwant %s", defaultsFile, g, w)
	}
}

// TestDefaultsFileHasEveryDefault: every key whose default is not zero
// (a duration, a URL, a policy's steps…) is written in the defaults file,
// so that the file shows each default and a key added later cannot be
// left out of it.
func TestDefaultsFileHasEveryDefault(t *testing.T) {
	b, err := os.ReadFile(defaultsFile)
	if err != nil {
		t.Fatal(err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	keyPaths(root.Content[0], "", written)
	defaults := map[string]bool{}
	defaultPaths(reflect.ValueOf(*Default()), "", defaults)
	if len(defaults) < 40 {
		t.Fatalf("only %d defaults found: the walk is broken", len(defaults))
	}
	var missing []string
	for p := range defaults {
		if !written[p] {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%s lacks keys that have a default: %s", defaultsFile, strings.Join(missing, ", "))
	}
}

// keyPaths collects the dotted path of every key written in a mapping.
func keyPaths(n *yaml.Node, prefix string, out map[string]bool) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		p := prefix + n.Content[i].Value
		out[p] = true
		keyPaths(n.Content[i+1], p+".", out)
	}
}

// defaultPaths collects the yaml path of every non-zero leaf of v: a
// scalar, a duration, a list (whole), a *bool; structs and maps are walked.
func defaultPaths(v reflect.Value, prefix string, out map[string]bool) {
	switch {
	case v.Kind() == reflect.Pointer:
		if !v.IsNil() {
			if v.Elem().Kind() == reflect.Struct {
				defaultPaths(v.Elem(), prefix, out)
			} else {
				out[strings.TrimSuffix(prefix, ".")] = true
			}
		}
	case v.Kind() == reflect.Struct && v.Type() != reflect.TypeOf(time.Time{}):
		for i := 0; i < v.NumField(); i++ {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			defaultPaths(v.Field(i), prefix+name+".", out)
		}
	case v.Kind() == reflect.Map:
		for _, k := range v.MapKeys() {
			defaultPaths(v.MapIndex(k), prefix+k.String()+".", out)
		}
	case !v.IsZero():
		out[strings.TrimSuffix(prefix, ".")] = true
	}
}
