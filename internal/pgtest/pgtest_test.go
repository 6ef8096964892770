package pgtest

import (
	"context"
	"strings"
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
