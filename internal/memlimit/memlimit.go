// Package memlimit sets Go's soft memory limit from the cgroup memory limit
// the process lives under (its own cgroup or one above it, v1 or v2).
package memlimit

import (
	"fmt"
	"path"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// Apply sets memoryLimit, if any, and says what the limit is, for the
// start line.
func Apply(getenv func(string) string, readFile func(string) ([]byte, error)) string {
	if v := getenv("GOMEMLIMIT"); v != "" {
		return v + " (GOMEMLIMIT)"
	}
	n := memoryLimit(readFile)
	if n == 0 {
		return "none"
	}
	debug.SetMemoryLimit(n)
	return fmt.Sprintf("%d MiB (80 %% of the cgroup's)", n>>20)
}

// memoryLimit is the soft limit for Go's memory under a cgroup memory
// limit (a container's, systemd's MemoryMax=, a parent slice's): 80 % of
// it. Without one, Go lets the heap grow to twice what is live before
// collecting (GOGC=100), and in a pod limited to 128 MiB a storm cycle
// (thousands of episodes opened at once) can take that past the limit: the
// kernel kills watchdogd, and a watchdog in a crash loop tells no one.
// With it the collector works harder as the limit nears. The other 20 % is
// for what Go does not count: SQLite's page caches (modernc allocates them
// outside Go's heap) and thread stacks.
//
// 0 means no limit was found: Go's setting stays. (GOMEMLIMIT, when set,
// wins before this is asked: the runtime read it at start.) readFile reads
// the files of /proc and /sys; tests give it fixture trees.
func memoryLimit(readFile func(string) ([]byte, error)) int64 {
	n := cgroupMemoryLimit(readFile)
	if n <= 0 {
		return 0
	}
	return n / 5 * 4
}

// cgroupMemoryLimit is the lowest memory limit set on this process's own
// cgroup or any cgroup above it within the mounted hierarchy (a limit on a
// parent bounds its children); 0 for none. The process's cgroup comes from
// /proc/self/cgroup and where its hierarchy is mounted from
// /proc/self/mountinfo: in a pod with its own cgroup namespace that is the
// mount's root, but under systemd or in a container without one it is a
// directory below it, whose limit the mount's root does not show.
func cgroupMemoryLimit(readFile func(string) ([]byte, error)) int64 {
	cg, err := readFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	mi, err := readFile("/proc/self/mountinfo")
	if err != nil {
		return 0
	}
	dir, top, file, ok := memoryCgroup(string(cg), string(mi))
	if !ok {
		return 0
	}
	var lowest int64
	for d := dir; ; d = path.Dir(d) {
		if n := readLimit(readFile, path.Join(d, file)); n > 0 && (lowest == 0 || n < lowest) {
			lowest = n
		}
		if d == top || d == "/" || d == "." {
			return lowest
		}
	}
}

// readLimit reads one limit file: memory.max (v2, "max" for none) or
// memory.limit_in_bytes (v1, a page-rounded MaxInt64 for none). 0 for no
// limit, no file or a value that is not a number.
func readLimit(readFile func(string) ([]byte, error), name string) int64 {
	b, err := readFile(name)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 || n >= 1<<62 {
		return 0
	}
	return n
}

// memoryCgroup finds, from /proc/self/cgroup and /proc/self/mountinfo, the
// directory of this process's memory cgroup (dir), the mount point of its
// hierarchy, above which there is nothing to read (top), and the name of
// the limit file. cgroup v1's memory controller (its own hierarchy, or
// with others) is preferred to v2's unified hierarchy: on a hybrid host
// the unified one has no memory controller. Pure.
func memoryCgroup(cgroupFile, mountinfo string) (dir, top, file string, ok bool) {
	var v1, v2 string
	haveV1, haveV2 := false, false
	for _, line := range strings.Split(cgroupFile, "\n") {
		id, rest, ok1 := strings.Cut(line, ":")
		controllers, p, ok2 := strings.Cut(rest, ":")
		switch {
		case !ok1 || !ok2:
		case slices.Contains(strings.Split(controllers, ","), "memory"):
			v1, haveV1 = p, true
		case id == "0" && controllers == "":
			v2, haveV2 = p, true
		}
	}
	for _, line := range strings.Split(mountinfo, "\n") {
		root, point, fstype, super, ok := mountFields(line)
		switch {
		case !ok:
		case haveV1 && fstype == "cgroup" && slices.Contains(strings.Split(super, ","), "memory"):
			return under(point, root, v1), point, "memory.limit_in_bytes", true
		case !haveV1 && haveV2 && fstype == "cgroup2":
			return under(point, root, v2), point, "memory.max", true
		}
	}
	return "", "", "", false
}

// under is where cgroup p is found in a hierarchy whose directory root is
// mounted at point; the mount point itself when p is not below root (a
// cgroup namespace's view, where p is relative to the namespace).
func under(point, root, p string) string {
	rel, found := strings.CutPrefix(p, root)
	if root == "/" {
		rel, found = p, true
	}
	if !found || (rel != "" && !strings.HasPrefix(rel, "/")) || strings.Contains(rel, "/..") {
		return point
	}
	return path.Join(point, rel)
}

// mountFields reads one line of /proc/self/mountinfo: the mounted
// directory of its filesystem (root), where it is mounted (point), its
// type and its super options. See proc(5).
func mountFields(line string) (root, point, fstype, super string, ok bool) {
	pre, post, found := strings.Cut(line, " - ")
	f, g := strings.Fields(pre), strings.Fields(post)
	if !found || len(f) < 5 || len(g) < 3 {
		return "", "", "", "", false
	}
	return unescapeMount(f[3]), unescapeMount(f[4]), g[0], g[2], true
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, \011,
// \012, \134).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
