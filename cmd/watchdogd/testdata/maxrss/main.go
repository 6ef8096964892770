// Command maxrss runs a command and writes its peak resident memory, in
// KiB, to a file: maxrss OUT COMMAND [ARG...]. The fault suite measures
// watchdogd through it because a process started straight from the test
// reports the test's own peak as well: Go starts commands with vfork, and
// Linux counts the parent's memory, which the child shares until it execs,
// in the child's ru_maxrss. This program is small, so what it adds is too.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: maxrss OUT COMMAND [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(os.Stderr, "maxrss:", err)
		os.Exit(2)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "maxrss: no resource usage")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], fmt.Appendf(nil, "%d\n", ru.Maxrss), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "maxrss:", err)
		os.Exit(2)
	}
	os.Exit(cmd.ProcessState.ExitCode())
}
