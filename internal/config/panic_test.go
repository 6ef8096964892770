package config

import (
	"errors"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestPanicHasALine: a panic while reading the file (here the environment
// lookup validation makes) is one problem at a line, "file:line: …", like
// every other: the top of the file when no node was being decoded.
func TestPanicHasALine(t *testing.T) {
	text := "schedule: \"@every 1m\"\nslack:\n  default_channel: C1\n"
	_, err := Parse("a.yaml", []byte(text), func(string) string { panic("lookup exploded") })
	var p *Problems
	if !errors.As(err, &p) || len(p.Items) != 1 {
		t.Fatalf("got %v", err)
	}
	if got, want := p.Error(), "a.yaml:1: (file): cannot be read: lookup exploded"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// exploding is a config value whose reading panics, as a library's parser
// might on a value it does not expect.
type exploding struct{}

func (*exploding) UnmarshalText([]byte) error { panic("parser exploded") }

// TestPanicAtItsNode: a panic while a value is decoded is reported at
// that value's line, not its parent's.
func TestPanicAtItsNode(t *testing.T) {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte("a:\n  b: 1\n  c:\n    x\n"), &root); err != nil {
		t.Fatal(err)
	}
	var v struct {
		A struct {
			B int       `yaml:"b"`
			C exploding `yaml:"c"`
		} `yaml:"a"`
	}
	d := &decoder{lines: map[string]int{}, getenv: noEnv}
	p := func() (p *Problems) {
		defer func() { p = d.panicked("a.yaml", recover()) }()
		d.decode(root.Content[0], reflect.ValueOf(&v).Elem(), "")
		return nil
	}()
	if got, want := p.Error(), "a.yaml:4: (file): cannot be read: parser exploded"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
