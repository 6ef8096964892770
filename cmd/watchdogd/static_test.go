package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestStaticBinary: the Dockerfile's build (CGO_ENABLED=0) gives a static
// executable — no ELF interpreter, no shared libraries — so it runs on a
// distroless static base. (No Docker engine runs here, so the image itself
// is not built in tests.)
func TestStaticBinary(t *testing.T) {
	df, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(df), "CGO_ENABLED=0") || !strings.Contains(string(df), "distroless/static") || !strings.Contains(string(df), "nonroot") {
		t.Fatal("the Dockerfile does not build a static binary on a non-root static base")
	}
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
