//go:build image

package imagetest

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

var (
	engineFlag   = flag.String("engine", "podman", "the container engine's command, with its global flags (podman --runtime runc …)")
	runFlagsFlag = flag.String("run-flags", "", "flags for every `run` (--ulimit …)")
	imageFlag    = flag.String("image", "", "the image to test (make image's IMAGE)")
	nameFlag     = flag.String("name", "watchdogd-image-test", "prefix of the containers' names, removed by name before and after")
	versionFlag  = flag.String("version", "", "the version the image and its binary must name")
)

// engine runs the container engine; every container it starts is named
// <prefix>-<what> and removed when the test ends, whatever happens.
type engine struct {
	t      *testing.T
	argv   []string
	run    []string
	image  string
	prefix string
}

func newEngine(t *testing.T) *engine {
	t.Helper()
	if *imageFlag == "" {
		t.Fatal("-image is required: run through `make test-image`")
	}
	return &engine{t: t, argv: strings.Fields(*engineFlag), run: strings.Fields(*runFlagsFlag),
		image: *imageFlag, prefix: *nameFlag}
}

// result is what one engine command did.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// cmd runs the engine with args, bounded by a generous deadline.
func (e *engine) cmd(args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, e.argv[0], append(e.argv[1:], args...)...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("%s %s: %v", strings.Join(e.argv, " "), strings.Join(args, " "), err)
	}
	return r
}

// must runs the engine and fails the test unless it exits 0.
func (e *engine) must(args ...string) result {
	e.t.Helper()
	r := e.cmd(args...)
	if r.code != 0 {
		e.t.Fatalf("%s %s: %s", strings.Join(e.argv, " "), strings.Join(args, " "), r)
	}
	return r
}

// name is the container name for what, removed now (a leftover of an
// interrupted run) and again when the test ends.
func (e *engine) name(what string) string {
	n := e.prefix + "-" + what
	_ = e.cmd("rm", "-f", n)
	e.t.Cleanup(func() { _ = e.cmd("rm", "-f", n) })
	return n
}

// runArgs is `run` as the chart runs the pod: a read-only root
// filesystem, the host's network (a loopback stand-in is reachable and the
// daemon's port is the host's), the image's own user.
func (e *engine) runArgs(name string, detach bool, opts ...string) []string {
	a := []string{"run", "--name", name, "--read-only", "--network", "host"}
	if detach {
		a = append(a, "-d")
	}
	a = append(a, e.run...)
	return append(a, opts...)
}

// runOnce runs the image to completion with opts (mounts, environment)
// then args for watchdogd.
func (e *engine) runOnce(what string, opts []string, args ...string) result {
	e.t.Helper()
	n := e.name(what)
	return e.cmd(append(append(e.runArgs(n, false, opts...), e.image), args...)...)
}
