// Package pgtest runs a throwaway PostgreSQL server from Debian's postgresql
// package for tests, or uses TEST_DATABASE_URL. A missing PostgreSQL is an
// error, never a skip: CI installs the package (.ci/run) and a dialect that
// silently stops being tested is a defect.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/watchdogd/watchdogd/internal/testport"
)

// Server is a PostgreSQL server the tests may use.
type Server struct {
	admin   string // DSN of a database to run CREATE DATABASE in
	binDir  string
	dataDir string
	dir     string
	port    int
	cred    *syscall.Credential
	owned   bool
	// settings are extra server settings (name=value), as StartWith got them.
	settings []string
	seq      atomic.Int64
	closers  []func()
}

// Start starts a private cluster, or returns TEST_DATABASE_URL's server.
func Start() (*Server, error) { return StartWith() }

// StartWith starts a private cluster with extra server settings, each
// name=value (a benchmark's shared_buffers, say). A server that
// TEST_DATABASE_URL names is someone else's, so settings are refused there.
func StartWith(settings ...string) (*Server, error) {
	for _, kv := range settings {
		if err := CheckSetting(kv); err != nil {
			return nil, err
		}
	}
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		if len(settings) > 0 {
			return nil, fmt.Errorf("server settings %v: TEST_DATABASE_URL names a server this process does not start", settings)
		}
		return &Server{admin: u}, nil
	}
	bin, err := findBinDir()
	if err != nil {
		return nil, err
	}
	s := &Server{binDir: bin, owned: true, settings: settings}
	if os.Geteuid() == 0 {
		// initdb refuses to run as root: run the server as the postgres user,
		// in a directory that user can enter (not t.TempDir(), whose parent
		// is root's and mode 0700).
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root needs the postgres user (Debian's postgresql package creates it): %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	s.reapOrphans(os.Stderr, syscall.Kill)
	s.dir, err = os.MkdirTemp("", serverPrefix)
	if err != nil {
		return nil, err
	}
	if err := writeOwner(s.dir); err != nil {
		_ = os.RemoveAll(s.dir)
		return nil, err
	}
	if s.cred != nil {
		if err := os.Chown(s.dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return nil, err
		}
	}
	s.dataDir = filepath.Join(s.dir, "data")
	if out, err := s.run("initdb", "-D", s.dataDir, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		_ = os.RemoveAll(s.dir)
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	if err := s.startServer(); err != nil {
		s.Close()
		return nil, err
	}
	s.admin = s.DSN("postgres")
	return s, nil
}

// CheckSetting refuses a server setting that is not name=value as one word
// (what pg_ctl's -o passes through intact: a space would start another
// option), so that a command can refuse it while parsing its flags, before
// any server starts.
func CheckSetting(kv string) error {
	bad := fmt.Errorf("server setting %q: want name=value, a lower-case name and a value without spaces or quotes", kv)
	name, value, ok := strings.Cut(kv, "=")
	if !ok || name == "" || value == "" || strings.ContainsAny(value, " \t\n'\"\\") {
		return bad
	}
	for _, c := range name {
		if (c < 'a' || c > 'z') && c != '_' && c != '.' && (c < '0' || c > '9') {
			return bad
		}
	}
	return nil
}

func (s *Server) startServer() error {
	for attempt := 0; attempt < 5; attempt++ {
		if s.port == 0 || attempt > 0 {
			p, err := testport.Free()
			if err != nil {
				return err
			}
			s.port = p
		}
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", s.port, s.dir)
		for _, kv := range s.settings {
			opts += " -c " + kv
		}
		out, err := s.run("pg_ctl", "-D", s.dataDir, "-o", opts, "-l", filepath.Join(s.dir, "server.log"), "-w", "-t", "60", "start")
		if err == nil {
			return nil
		}
		if attempt == 4 {
			log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			return fmt.Errorf("pg_ctl start: %w\n%s\n%s", err, out, log)
		}
	}
	return nil
}

// Stop stops the server (fault tests: kandev's database goes away).
func (s *Server) Stop() error {
	if !s.owned {
		return errors.New("pgtest: cannot stop a TEST_DATABASE_URL server")
	}
	out, err := s.run("pg_ctl", "-D", s.dataDir, "-m", "fast", "-w", "stop")
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %w\n%s", err, out)
	}
	return nil
}

// Restart starts a stopped server again on the same port.
func (s *Server) Restart() error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", s.port, s.dir)
	out, err := s.run("pg_ctl", "-D", s.dataDir, "-o", opts, "-l", filepath.Join(s.dir, "server.log"), "-w", "-t", "60", "start")
	if err != nil {
		return fmt.Errorf("pg_ctl start: %w\n%s", err, out)
	}
	return nil
}

// OnClose runs f when the server is closed, before it stops: a bouncer a
// test package started in front of it, say.
func (s *Server) OnClose(f func()) { s.closers = append(s.closers, f) }

// Close stops a private server and removes its files.
func (s *Server) Close() {
	for _, f := range s.closers {
		f()
	}
	s.closers = nil
	if !s.owned || s.dir == "" {
		return
	}
	_, _ = s.run("pg_ctl", "-D", s.dataDir, "-m", "immediate", "-w", "stop")
	_ = os.RemoveAll(s.dir)
}

// DSN is the URL of database db on a private server, over loopback TCP.
func (s *Server) DSN(db string) string {
	if !s.owned {
		u := s.admin
		if i := strings.LastIndex(u, "/"); i > len("postgres://") {
			rest := ""
			if q := strings.IndexByte(u[i:], '?'); q >= 0 {
				rest = u[i+q:]
			}
			return u[:i+1] + db + rest
		}
		return u
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// NewDatabase creates an empty database and returns its URL.
func (s *Server) NewDatabase(ctx context.Context, prefix string) (string, error) {
	return s.createDatabase(ctx, prefix, "")
}

// CopyDatabase creates a database as a copy of the one at dsn (its
// template), and returns the copy's URL. Nothing may be connected to the
// original while it is copied.
func (s *Server) CopyDatabase(ctx context.Context, dsn, prefix string) (string, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "", fmt.Errorf("copy database: %w", err)
	}
	return s.createDatabase(ctx, prefix, cfg.Database)
}

func (s *Server) createDatabase(ctx context.Context, prefix, template string) (string, error) {
	name := fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), s.seq.Add(1))
	conn, err := pgx.Connect(ctx, s.admin)
	if err != nil {
		return "", fmt.Errorf("connect to test PostgreSQL: %w", err)
	}
	defer func() { _ = conn.Close(ctx) }()
	create := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		create += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	if _, err := conn.Exec(ctx, create); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return s.DSN(name), nil
}

// DropDatabase drops the database at dsn, closing any connection still
// open on it: a benchmark's datasets are gigabytes each, and left until
// the server stops they would fill the disk.
func (s *Server) DropDatabase(ctx context.Context, dsn string) error {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return fmt.Errorf("drop database: %w", err)
	}
	if err := s.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{cfg.Database}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", cfg.Database, err)
	}
	return nil
}

// Exec runs SQL as the superuser in the admin database.
func (s *Server) Exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, s.admin)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(ctx) }()
	_, err = conn.Exec(ctx, sql)
	return err
}

func (s *Server) run(tool string, args ...string) ([]byte, error) {
	keepFromChildren()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.binDir, tool), args...)
	cmd.Dir = s.dir
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	return cmd.CombinedOutput()
}

// keepFromChildren marks every descriptor above the standard three
// close-on-exec, so that a server started from this process does not hold
// them. Go opens its own files close-on-exec, but not those the process
// inherited. A fuzzing worker inherits its pipes to the coordinator, and a
// PostgreSQL started by a worker that was then stopped kept them open: the
// coordinator waited for their end until the test binary's timeout (a hung
// make fuzz, seen once on 2026-12-02).
func keepFromChildren() {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return // no /proc: nothing to list the descriptors from
	}
	for _, e := range fds {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

// findBinDir locates Debian's server binaries (/usr/lib/postgresql/N/bin),
// newest version first, else initdb on PATH.
func findBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no PostgreSQL server found: install Debian's postgresql package (apt-get install postgresql) or set TEST_DATABASE_URL")
}

func version(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}

// RunTests is a test package's TestMain body: it starts the server, hands
// it to set, runs the tests and stops the server. A PostgreSQL that cannot
// start fails the package (exit code 1) rather than skipping its tests.
func RunTests(m *testing.M, set func(*Server)) int {
	srv, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start PostgreSQL for tests:", err)
		return 1
	}
	defer srv.Close()
	set(srv)
	return m.Run()
}
