//go:build image

package imagetest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestREADMEContainerLines runs the README's container lines as printed:
// each `podman run` in its sh blocks, with only the engine's command (its
// global flags, or docker) and the image's name put in for the ones the
// reader would type, from a directory holding the defaults file as
// watchdogd.yaml. Each must exit 0, and each carries the run flags the
// engine here needs (make's IMAGE_RUN_FLAGS), without which podman with
// runc cannot start a container on a host whose limits are higher.
func TestREADMEContainerLines(t *testing.T) {
	e := newEngine(t)
	lines := readmeRuns(t)
	if len(lines) < 2 {
		t.Fatalf("the README has %d podman run lines, want the demo and check-config", len(lines))
	}
	dir := t.TempDir()
	b, err := os.ReadFile("../../config/watchdogd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "watchdogd.yaml"), string(b))
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	image := regexp.MustCompile(`ghcr\.io/watchdogd/watchdogd:[^\s]+`)
	for i, line := range lines {
		for _, f := range e.run {
			if !strings.Contains(line, f) {
				t.Errorf("README line %q lacks %s", line, f)
			}
		}
		name := e.name("readme-" + string(rune('a'+i)))
		cmd := strings.Join(e.argv, " ") + " run --name " + name + strings.TrimPrefix(line, "podman run")
		cmd = image.ReplaceAllLiteralString(cmd, e.image)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		c := exec.CommandContext(ctx, "sh", "-c", cmd)
		c.Dir = dir
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		cancel()
		if err != nil || out.Len() == 0 {
			t.Errorf("README line %q (run as %q): %v\nstdout:\n%s\nstderr:\n%s", line, cmd, err, out.String(), errb.String())
			continue
		}
		if strings.Contains(line, "check-config") && !strings.Contains(out.String(), "SUCCESS: ") {
			t.Errorf("README line %q: %s", line, out.String())
		}
	}
}

// readmeRuns is every `podman run` command in the README's sh blocks,
// continuation lines joined.
func readmeRuns(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var runs []string
	in, cur := false, ""
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "```"):
			in = l == "```sh"
		case !in:
		case cur != "" || strings.HasPrefix(l, "podman run "):
			cur += strings.TrimSuffix(l, "\\") + " "
			if !strings.HasSuffix(l, "\\") {
				runs = append(runs, strings.Join(strings.Fields(cur), " "))
				cur = ""
			}
		}
	}
	return runs
}
