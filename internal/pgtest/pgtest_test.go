package pgtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestStartWithSettings: a setting given to StartWith is the server's
// (the benchmark's buffer pool is measured at more than the default).
func TestStartWithSettings(t *testing.T) {
	t.Setenv("TEST_DATABASE_URL", "")
	srv, err := StartWith("shared_buffers=16MB", "work_mem=5MB")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, srv.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	for name, want := range map[string]string{"shared_buffers": "16MB", "work_mem": "5MB"} {
		var got string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
}

// TestStartWithRefuses: a setting that is not one word name=value is
// refused before any server starts (pg_ctl would split it, or take it as
// another option), and so is any setting for a server this process does
// not start.
func TestStartWithRefuses(t *testing.T) {
	for _, bad := range []string{"shared_buffers", "=4GB", "shared_buffers=", "shared_buffers=4GB -c fsync=on", "Shared_Buffers=4GB", "a='b'"} {
		t.Setenv("TEST_DATABASE_URL", "")
		if srv, err := StartWith(bad); err == nil {
			srv.Close()
			t.Errorf("StartWith(%q) started a server", bad)
		} else if !strings.Contains(err.Error(), "want name=value") {
			t.Errorf("StartWith(%q): %v", bad, err)
		}
	}
	t.Setenv("TEST_DATABASE_URL", "postgres://someone@elsewhere/db")
	if _, err := StartWith("shared_buffers=4GB"); err == nil || !strings.Contains(err.Error(), "TEST_DATABASE_URL") {
		t.Errorf("a setting for TEST_DATABASE_URL's server: %v", err)
	}
}

// TestServerHoldsNoInheritedDescriptor: a descriptor the test process
// inherited without close-on-exec (a fuzzing worker's pipe to its
// coordinator) is not held by the server it starts, or the coordinator
// would wait for the pipe's end after the worker had gone.
func TestServerHoldsNoInheritedDescriptor(t *testing.T) {
	t.Setenv("TEST_DATABASE_URL", "")
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil { // pipe2 without O_CLOEXEC, as inherited
		t.Fatal(err)
	}
	defer func() { _ = syscall.Close(p[0]); _ = syscall.Close(p[1]) }()
	var st syscall.Stat_t
	if err := syscall.Fstat(p[1], &st); err != nil {
		t.Fatal(err)
	}
	pipe := fmt.Sprintf("pipe:[%d]", st.Ino)
	srv, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	pid := pidIn(t, filepath.Join(srv.dataDir, "postmaster.pid"))
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil || len(fds) == 0 {
		t.Fatalf("the server's descriptors (pid %d): %v", pid, err)
	}
	for _, e := range fds {
		if target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name())); target == pipe {
			t.Errorf("the server holds the test process's %s as its descriptor %s", pipe, e.Name())
		}
	}
}
