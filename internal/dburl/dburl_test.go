package dburl

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestParse: each accepted spelling, and each refusal with an error that
// says what is wanted and prints no part of a URL it cannot read.
func TestParse(t *testing.T) {
	home, _ := os.UserHomeDir()
	cases := []struct {
		raw     string
		kind    Kind
		path    string
		wantErr string
	}{
		{raw: "sqlite:///var/lib/kandev/kandev.db", kind: SQLite, path: "/var/lib/kandev/kandev.db"},
		{raw: "sqlite://data/kandev.db", kind: SQLite, path: "data/kandev.db"},
		{raw: "sqlite://~/kandev.db", kind: SQLite, path: filepath.Join(home, "kandev.db")},
		{raw: "postgres://u:p@db:5432/kandev?sslmode=disable", kind: Postgres},
		{raw: "postgresql://db/kandev", kind: Postgres},
		{raw: "sqlite://", wantErr: "names no file"},
		{raw: "", wantErr: "empty database URL"},
		{raw: "mysql://u:hunter2@db/kandev", wantErr: "want sqlite://PATH, postgres:// or postgresql://"},
		{raw: "host=db password=hunter2", wantErr: "is not printed"},
		// One slash short: net/url would read a path with no user part
		// in it, and nothing to redact.
		{raw: "postgres:/alice:hunter2@db/kandev", wantErr: "is not printed"},
	}
	for _, c := range cases {
		got, err := Parse(c.raw)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Parse(%q) = %v, want an error with %q", c.raw, err, c.wantErr)
			}
			if err != nil && (strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "alice")) {
				t.Errorf("Parse(%q): error prints the URL: %v", c.raw, err)
			}
			continue
		}
		if err != nil || got.Kind != c.kind || got.Path != c.path || (c.kind == Postgres && got.DSN != c.raw) {
			t.Errorf("Parse(%q) = %+v, %v", c.raw, got, err)
		}
	}
}

// clearPGEnv keeps the environment's PG* variables (which pgx reads, as
// libpq does) out of a test.
func clearPGEnv(t *testing.T) {
	for _, k := range []string{"PGHOST", "PGPORT", "PGDATABASE", "PGUSER", "PGPASSWORD", "PGPASSFILE", "PGSERVICE", "PGSERVICEFILE",
		"PGSSLMODE", "PGSSLCERT", "PGSSLKEY", "PGSSLROOTCERT", "PGSSLPASSWORD", "PGAPPNAME", "PGCONNECT_TIMEOUT", "PGTARGETSESSIONATTRS"} {
		t.Setenv(k, "")
	}
	t.Setenv("PGPASSFILE", filepath.Join(t.TempDir(), "none"))
}

// TestRedact: a PostgreSQL URL is printed from what pgx read of it (the
// parser that connects), password replaced, query left out; a URL pgx
// cannot read is not printed at all.
func TestRedact(t *testing.T) {
	clearPGEnv(t)
	cases := map[string]string{
		"postgres://watchdogd:hunter2@db:5432/kandev":         "postgres://watchdogd:xxxxx@db:5432/kandev",
		"postgres://watchdogd@db/kandev?password=hunter2&x=1": "postgres://watchdogd:xxxxx@db:5432/kandev",
		"postgres://watchdogd@db/kandev?sslmode=disable":      "postgres://watchdogd@db:5432/kandev",
		"sqlite:///var/lib/kandev.db":                         "sqlite:///var/lib/kandev.db",
		"postgres://watchdogd:p%40ss%3Aw0rd@db/kandev":        "postgres://watchdogd:xxxxx@db:5432/kandev",
		"postgresql://u:hunter2@h1:5432,h2:5433/kandev?x=y":   "postgresql://u:xxxxx@h1:5432,h2:5433/kandev",
		"postgres://u@[::1]:5433/kandev":                      "postgres://u@[::1]:5433/kandev",
		"postgres://u@/kandev?host=/run/postgresql":           "postgres://u@%2Frun%2Fpostgresql:5432/kandev",
		"": "",
		// Where libpq and pgx end the password and net/url does not:
		// for net/url '#' opens a fragment and '?' a query, leaving no
		// password to redact.
		"postgres://alice:#hunter2@db/kandev":     "postgres://alice:xxxxx@db:5432/kandev",
		"postgres://alice:2024?hunter2@db/kandev": "postgres://alice:xxxxx@db:5432/kandev",
		// sslpassword is the client key's passphrase.
		"postgres://alice@db/kandev?sslpassword=hunter2&sslmode=disable": "postgres://alice@db:5432/kandev",
		// A key pgx does not know goes to the server as a setting.
		"postgres://alice@db/kandev?pasword=hunter2": "postgres://alice@db:5432/kandev",
		// What pgx cannot read is not printed.
		"postgres://watchdogd:%zz@db/kandev":        Unparseable,
		"postgres://alice:hunter2@db:99999/kandev":  Unparseable,
		"postgres:/alice:hunter2@db/kandev":         Unparseable,
		"user=watchdogd password=hunter2 host=db":   Unparseable,
		"mysql://alice:hunter2@db/kandev":           Unparseable,
		"postgres://alice:hunter2@[::1/kandev":      Unparseable,
		"postgres://alice@db/kandev?sslpassword==x": Unparseable,
	}
	for raw, want := range cases {
		if got := Redact(raw); got != want {
			t.Errorf("Redact(%q) = %q, want %q", raw, got, want)
		}
	}
}

// TestRedactError: pgx's parse errors lose the connection string they
// quote (pgx redacts it on a best-effort basis only), and a DSN quoted in
// any other error is replaced by its redacted form.
func TestRedactError(t *testing.T) {
	clearPGEnv(t)
	dsn := "postgres://u:hunter2@db/kandev"
	err := RedactError(errors.New("connect to "+dsn+": refused"), dsn)
	if got := err.Error(); got != "connect to postgres://u:xxxxx@db:5432/kandev: refused" {
		t.Errorf("RedactError = %q", got)
	}
	plain := errors.New("refused")
	if got := RedactError(plain, dsn); got != plain { //nolint:errorlint // the same error value, not a wrapped one, is the contract
		t.Errorf("RedactError replaced an error that holds no DSN: %v", got)
	}
	if RedactError(nil, dsn) != nil {
		t.Error("RedactError(nil) is not nil")
	}
	for dsn, reason := range map[string]string{
		"postgres://alice:hunter2@db:99999/kandev":                   "invalid port",
		"postgres://alice:hunter2@db/kandev?connect_timeout=hunter2": "invalid connect_timeout",
		"postgres://alice:hun%zzter2@db/kandev":                      "failed to parse as URL",
		"postgres://alice@db/kandev?sslpassword==hunter2":            "failed to parse as URL",
		"postgres://alice:#hunter2@db:x/kandev":                      "invalid port",
	} {
		err := RedactError(pgxParse(dsn), dsn)
		if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), reason) {
			t.Errorf("RedactError(pgx's error for %q) = %v, want %q without the password", dsn, err, reason)
		}
	}
}

// TestWrittenSecrets: the secrets written in the URL itself, as pgx reads
// it, whatever the environment holds.
func TestWrittenSecrets(t *testing.T) {
	clearPGEnv(t)
	t.Setenv("PGPASSWORD", "from-the-environment")
	cases := map[string]string{
		"postgres://alice@db/kandev":                                      "",
		"postgres://alice:hunter2@db/kandev":                              "password",
		"postgres://alice:#hunter2@db/kandev":                             "password",
		"postgres://alice:2024?hunter2@db/kandev":                         "password",
		"postgres://alice@db/kandev?sslmode=disable&password=hunter2":     "password",
		"postgres://alice@db/kandev?sslpassword=hunter2&ssl=true&x=1&y=2": "sslpassword",
		"postgres://alice:a@db/kandev?sslpassword=b":                      "password,sslpassword",
		"postgres://alice:@db/kandev":                                     "",
	}
	for raw, want := range cases {
		got, err := WrittenSecrets(raw)
		if err != nil || strings.Join(sorted(got), ",") != want {
			t.Errorf("WrittenSecrets(%q) = %v, %v; want %q", raw, got, err, want)
		}
	}
	if _, err := WrittenSecrets("postgres://alice:hun%zzter2@db/kandev"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("WrittenSecrets of an unreadable URL: %v", err)
	}
}

func TestEscapeSQLitePath(t *testing.T) {
	if got := EscapeSQLitePath("/data/50%?#.db"); got != "/data/50%25%3F%23.db" {
		t.Errorf("EscapeSQLitePath = %q", got)
	}
}

// pgxParse is pgx's own error for dsn.
func pgxParse(dsn string) error {
	_, err := pgx.ParseConfig(dsn)
	return err
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
