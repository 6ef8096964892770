package layout

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxLines is the most lines a hand-written Go file may have: a file a
// reader takes in whole. Tests are held to it too.
const maxLines = 400

// TestFileLength: no hand-written Go file in the tree, test or not, is
// longer than maxLines (lines as wc -l counts them). Generated files, and
// what is not the project's (hidden directories such as .git and .cache,
// bin/, dist/), are not held.
func TestFileLength(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module's root is not %s: %v", root, err)
	}
	// Go's mark of a generated file (`go help generate`).
	generated := regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || (filepath.Dir(path) == root && (n == "bin" || n == "dist"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generated.Match(b) {
			return nil
		}
		checked++
		if n := bytes.Count(b, []byte("\n")); n > maxLines {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s has %d lines, more than %d: split it where it has two subjects", rel, n, maxLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d Go files: the walk did not see the tree", checked)
	}
}
