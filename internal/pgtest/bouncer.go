package pgtest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/watchdogd/watchdogd/internal/testport"
)

// Bouncer is Debian's PgBouncer in front of the server, as deployments put
// one in front of kandev's database. It keeps PgBouncer's defaults that
// matter to a client: only the startup parameters it tracks are accepted,
// and in transaction mode nothing of a session survives its transaction.
type Bouncer struct {
	cmd  *exec.Cmd
	dir  string
	port int
	user string
	done chan struct{} // closed when pgbouncer exited, with waitErr set
	// waitErr is how pgbouncer exited.
	waitErr error
}

// StartBouncer starts PgBouncer in pool mode ("session" or "transaction")
// with at most size server connections per database: in transaction mode
// a size of 1 makes every client share one, so that what one client leaves
// on a server connection, the next one meets.
func (s *Server) StartBouncer(mode string, size int) (*Bouncer, error) {
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/pgbouncer"); serr != nil {
			return nil, errors.New("no pgbouncer found: install Debian's pgbouncer package (apt-get install pgbouncer)")
		}
		bin = "/usr/sbin/pgbouncer"
	}
	upstream, err := pgx.ParseConfig(s.admin)
	if err != nil {
		return nil, err
	}
	b := &Bouncer{user: upstream.User, done: make(chan struct{})}
	if b.dir, err = os.MkdirTemp("", bouncerPrefix); err != nil {
		return nil, err
	}
	if err := writeOwner(b.dir); err != nil {
		b.Close()
		return nil, err
	}
	if b.port, err = testport.Free(); err != nil {
		b.Close()
		return nil, err
	}
	ini := bouncerIni(upstream, b.port, b.dir, mode, size)
	files := map[string]string{"pgbouncer.ini": ini, "users.txt": strconv.Quote(upstream.User) + ` ""` + "\n"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(b.dir, name), []byte(content), 0o600); err != nil {
			b.Close()
			return nil, err
		}
	}
	if err := b.start(bin, s.cred); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// bouncerIni is PgBouncer's configuration: every database of the upstream
// server, trusted local clients, and its files in dir.
func bouncerIni(upstream *pgx.ConnConfig, port int, dir, mode string, size int) string {
	password := ""
	if upstream.Password != "" {
		password = " password=" + upstream.Password
	}
	// Every test makes a database of its own, and PgBouncer keeps a pool
	// per database: with its default server_idle_timeout (600 s) the
	// server connections of tests long done pile up on the test server
	// until it refuses new clients (max_connections). Under `go test
	// -count=4 ./internal/...` the ledger's server reached its 200, and
	// refused clients in one run; with 10 s it peaked at 44. Ten seconds
	// idle is far beyond any one test's pause between statements.
	return fmt.Sprintf(`[databases]
* = host=%s port=%d user=%s%s
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = %s
default_pool_size = %d
max_client_conn = 50
server_idle_timeout = 10
logfile = %s
pidfile = %s
`, upstream.Host, upstream.Port, upstream.User, password, port,
		filepath.Join(dir, "users.txt"), mode, size, filepath.Join(dir, "pgbouncer.log"), filepath.Join(dir, "pgbouncer.pid"))
}

// start runs pgbouncer in the foreground (as the postgres user when root:
// it refuses to run as root) and waits until it accepts connections.
func (b *Bouncer) start(bin string, cred *syscall.Credential) error {
	if cred != nil {
		for _, p := range []string{b.dir, filepath.Join(b.dir, "pgbouncer.ini"), filepath.Join(b.dir, "users.txt")} {
			if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
				return err
			}
		}
	}
	keepFromChildren()
	b.cmd = exec.Command(bin, filepath.Join(b.dir, "pgbouncer.ini"))
	b.cmd.Dir = b.dir
	if cred != nil {
		b.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if err := b.cmd.Start(); err != nil {
		return fmt.Errorf("start pgbouncer: %w", err)
	}
	go func() {
		b.waitErr = b.cmd.Wait()
		close(b.done)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", b.port), time.Second)
		if err == nil {
			_ = c.Close()
			return nil
		}
		select {
		case <-b.done:
			return fmt.Errorf("pgbouncer exited: %w\n%s", b.waitErr, b.Log())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgbouncer not listening after 20s: %w", err)
		}
	}
}

// Log is PgBouncer's log, for a failing test's message.
func (b *Bouncer) Log() string {
	out, _ := os.ReadFile(filepath.Join(b.dir, "pgbouncer.log"))
	return string(out)
}

// Close stops PgBouncer and removes its files.
func (b *Bouncer) Close() {
	if b.cmd != nil && b.cmd.Process != nil {
		_ = b.cmd.Process.Kill()
		select {
		case <-b.done:
		case <-time.After(10 * time.Second):
		}
	}
	_ = os.RemoveAll(b.dir)
}

// Through is dsn's database reached through the bouncer.
func (b *Bouncer) Through(dsn string) (string, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", b.user, b.port, cfg.Database), nil
}
