package daemon

import (
	"errors"
	"io/fs"
	"runtime/debug"
	"testing"
)

// TestMemoryLimit: Go's soft memory limit follows the container's, with
// room for what Go does not count; without a limit there is none.
func TestMemoryLimit(t *testing.T) {
	const v2, v1 = "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"
	cases := []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"cgroup v2, the chart's 128Mi", map[string]string{v2: "134217728\n"}, 107374180},
		{"cgroup v2 without a limit", map[string]string{v2: "max\n"}, 0},
		{"cgroup v1", map[string]string{v1: "268435456\n"}, 214748364},
		// v1 writes "no limit" as MaxInt64 rounded down to a page.
		{"cgroup v1 without a limit", map[string]string{v1: "9223372036854771712\n"}, 0},
		{"v2 is read before v1", map[string]string{v2: "134217728", v1: "268435456"}, 107374180},
		{"not in a container", nil, 0},
		{"unreadable value", map[string]string{v2: "lots"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			read := func(p string) ([]byte, error) {
				if s, ok := c.files[p]; ok {
					return []byte(s), nil
				}
				return nil, fs.ErrNotExist
			}
			if got := memoryLimit(read); got != c.want {
				t.Fatalf("memoryLimit = %d, want %d", got, c.want)
			}
		})
	}
}

// TestApplyMemoryLimit: the limit found is the one Go runs with, an
// operator's GOMEMLIMIT wins, and the start line says which.
func TestApplyMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	none := func(string) string { return "" }
	got := applyMemoryLimit(none, func(string) ([]byte, error) { return []byte("134217728"), nil })
	if got != "102 MiB (80 % of the container's)" || debug.SetMemoryLimit(-1) != 107374180 {
		t.Fatalf("applied %q, Go's limit %d", got, debug.SetMemoryLimit(-1))
	}
	debug.SetMemoryLimit(prev)
	if got := applyMemoryLimit(none, func(string) ([]byte, error) { return nil, errors.New("no cgroup") }); got != "none" || debug.SetMemoryLimit(-1) != prev {
		t.Fatalf("without a limit: %q, Go's limit %d", got, debug.SetMemoryLimit(-1))
	}
	read := func(string) ([]byte, error) { return []byte("134217728"), nil }
	if got := applyMemoryLimit(func(string) string { return "200MiB" }, read); got != "200MiB (GOMEMLIMIT)" || debug.SetMemoryLimit(-1) != prev {
		t.Fatalf("with GOMEMLIMIT: %q", got)
	}
}
