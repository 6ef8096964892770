package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestStaticBinary: the binary built as `make build` builds it
// (CGO_ENABLED=0) is a static executable — no ELF interpreter, no shared
// libraries — so it runs in the image, which is FROM scratch and has no libc.
// `make test-image` runs the image itself.
func TestStaticBinary(t *testing.T) {
	out := filepath.Join(t.TempDir(), "watchdogd")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary has an ELF interpreter: it is dynamically linked")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Fatalf("the binary links %v", libs)
	}
}
