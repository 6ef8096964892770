package daemon

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
)

// applyMemoryLimit sets memoryLimit, if any, and says what the limit is,
// for the start line.
func applyMemoryLimit(getenv func(string) string, readFile func(string) ([]byte, error)) string {
	if v := getenv("GOMEMLIMIT"); v != "" {
		return v + " (GOMEMLIMIT)"
	}
	n := memoryLimit(readFile)
	if n == 0 {
		return "none"
	}
	debug.SetMemoryLimit(n)
	return fmt.Sprintf("%d MiB (80 %% of the container's)", n>>20)
}

// memoryLimit is the soft limit for Go's memory in a container with a
// memory limit: 80 % of it. Without one, Go lets the heap grow to twice
// what is live before collecting (GOGC=100), and in a pod limited to
// 128 MiB a storm cycle (thousands of episodes opened at once) can take
// that past the limit: the kernel kills watchdogd, and a watchdog in a
// crash loop tells no one. With it the collector works harder as the limit
// nears. The other 20 % is for what Go does not count: SQLite's page
// caches (modernc allocates them outside Go's heap) and thread stacks.
//
// 0 means no limit was found: Go's setting stays. (GOMEMLIMIT, when set,
// wins before this is asked: the runtime read it at start.)
func memoryLimit(readFile func(string) ([]byte, error)) int64 {
	// cgroup v2 (the container's own cgroup is the root of its namespace),
	// then v1.
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := readFile(p)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<62 { // "max", or v1's page-rounded MaxInt64: no limit
			return 0
		}
		return n / 5 * 4
	}
	return 0
}
