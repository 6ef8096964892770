package config

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse: whatever the bytes, the loader returns a config or problems
// with a line and a field — never a panic, never both. Its seeds are the
// corpus in testdata/fuzz/FuzzParse, which cmd/watchdogd's
// TestReloadSurvivesFuzzCorpus also feeds to a running daemon's reload.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse("fuzz.yaml", b, func(string) string { return "tok" })
		var p *Problems
		switch {
		case err == nil && c == nil:
			t.Fatal("no config and no error")
		case err != nil && c != nil:
			t.Fatal("a config and an error")
		case err != nil && !errors.As(err, &p):
			t.Fatalf("error is not *Problems: %v", err)
		case err != nil:
			for _, it := range p.Items {
				if it.Line < 0 || it.Field == "" || it.Msg == "" || strings.Contains(it.Msg, "\n") {
					t.Fatalf("malformed problem %+v", it)
				}
			}
		}
	})
}
