package memlimit

import (
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// fixture reads the files of a fixture tree under testdata/cgroup as if it
// were the root of the filesystem.
func fixture(name string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) { return os.ReadFile(filepath.Join("testdata", "cgroup", name, p)) }
}

// TestMemoryLimit: Go's soft memory limit is 80 % of the lowest limit on
// the process's own cgroup or one above it, found through
// /proc/self/cgroup and /proc/self/mountinfo on either cgroup version;
// without a limit there is none. Each case is a fixture tree of the files
// a real host of that layout has.
func TestMemoryLimit(t *testing.T) {
	cases := []struct {
		tree string
		want int64
	}{
		// A pod with its own cgroup namespace: the limit on the mount's root.
		{"v2-pod", 134217728 / 5 * 4},
		// systemd's MemoryMax= on the service: below the mount's root,
		// where reading only /sys/fs/cgroup/memory.max finds nothing.
		{"v2-systemd", 268435456 / 5 * 4},
		// The leaf says max; its parent slice bounds it.
		{"v2-parent", 536870912 / 5 * 4},
		{"v2-none", 0},
		// Docker without a cgroup namespace: the container's cgroup is
		// mounted as the hierarchy's root, so /proc/self/cgroup's path is
		// the mount's own root.
		{"v1-docker", 268435456 / 5 * 4},
		// A hybrid host (memory on v1; the unified hierarchy holds no
		// memory controller, and its stray memory.max is not read): a
		// nested cgroup without a limit under a parent limited to 1 GiB.
		{"v1-hybrid", 1073741824 / 5 * 4},
		// The leaf's limit is lower than its ancestors'.
		{"v1-nested", 134217728 / 5 * 4},
		// No /proc (another OS): no limit.
		{"absent", 0},
	}
	for _, c := range cases {
		t.Run(c.tree, func(t *testing.T) {
			if got := memoryLimit(fixture(c.tree)); got != c.want {
				t.Fatalf("memoryLimit = %d, want %d", got, c.want)
			}
		})
	}
}

// TestMemoryCgroup: which directory is read, and up to where, for the
// shapes /proc/self/cgroup and /proc/self/mountinfo take.
func TestMemoryCgroup(t *testing.T) {
	cases := []struct {
		name, cgroup, mountinfo string
		dir, top, file          string
	}{
		{"v2 at the root", "0::/\n", "1 0 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			"/sys/fs/cgroup", "/sys/fs/cgroup", "memory.max"},
		{"v2 nested", "0::/a/b\n", "1 0 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			"/sys/fs/cgroup/a/b", "/sys/fs/cgroup", "memory.max"},
		// mountinfo escapes a space in a mount point as \040.
		{"escaped mount point", "0::/app\n", `1 0 0:26 / /run/my\040cg rw - cgroup2 cgroup2 rw` + "\n",
			"/run/my cg/app", "/run/my cg", "memory.max"},
		// memory shares a hierarchy with another controller.
		{"v1 joint hierarchy", "3:cpu,memory:/x\n0::/\n", "1 0 0:30 / /sys/fs/cgroup/cpu,memory rw - cgroup cgroup rw,cpu,memory\n",
			"/sys/fs/cgroup/cpu,memory/x", "/sys/fs/cgroup/cpu,memory", "memory.limit_in_bytes"},
		// A path outside the mount's root (another namespace's view):
		// the mount point is all there is to read.
		{"outside the mount", "4:memory:/other\n", "1 0 0:32 /docker/c1 /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
			"/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory", "memory.limit_in_bytes"},
		{"a prefix is not a parent", "4:memory:/docker/c10\n", "1 0 0:32 /docker/c1 /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
			"/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory", "memory.limit_in_bytes"},
		{"no memory hierarchy mounted", "4:memory:/x\n", "1 0 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "", "", ""},
		{"garbage", "nonsense\n", "nonsense - \n", "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, top, file, ok := memoryCgroup(c.cgroup, c.mountinfo)
			if dir != c.dir || top != c.top || file != c.file || ok != (c.dir != "") {
				t.Fatalf("memoryCgroup = %q %q %q %v, want %q %q %q", dir, top, file, ok, c.dir, c.top, c.file)
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
	got := Apply(none, fixture("v2-pod"))
	if got != "102 MiB (80 % of the cgroup's)" || debug.SetMemoryLimit(-1) != 107374180 {
		t.Fatalf("applied %q, Go's limit %d", got, debug.SetMemoryLimit(-1))
	}
	debug.SetMemoryLimit(prev)
	if got := Apply(none, func(string) ([]byte, error) { return nil, errors.New("no cgroup") }); got != "none" || debug.SetMemoryLimit(-1) != prev {
		t.Fatalf("without a limit: %q, Go's limit %d", got, debug.SetMemoryLimit(-1))
	}
	if got := Apply(func(string) string { return "200MiB" }, fixture("v2-pod")); got != "200MiB (GOMEMLIMIT)" || debug.SetMemoryLimit(-1) != prev {
		t.Fatalf("with GOMEMLIMIT: %q", got)
	}
}
