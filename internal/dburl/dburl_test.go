package dburl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParse: each accepted spelling, and each refusal with an error that
// says what is wanted and never prints a password.
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
		{raw: "host=db password=hunter2", wantErr: "<unparseable database URL>"},
	}
	for _, c := range cases {
		got, err := Parse(c.raw)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Parse(%q) = %v, want an error with %q", c.raw, err, c.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("Parse(%q): error prints the password: %v", c.raw, err)
			}
			continue
		}
		if err != nil || got.Kind != c.kind || got.Path != c.path || (c.kind == Postgres && got.DSN != c.raw) {
			t.Errorf("Parse(%q) = %+v, %v", c.raw, got, err)
		}
	}
}

// TestRedact: passwords in the user part and in the query are replaced;
// URLs without one are left as they are.
func TestRedact(t *testing.T) {
	cases := map[string]string{
		"postgres://watchdogd:hunter2@db:5432/kandev":         "postgres://watchdogd:xxxxx@db:5432/kandev",
		"postgres://watchdogd@db/kandev?password=hunter2&x=1": "postgres://watchdogd@db/kandev?password=xxxxx&x=1",
		"postgres://db/kandev?sslmode=disable":                "postgres://db/kandev?sslmode=disable",
		"sqlite:///var/lib/kandev.db":                         "sqlite:///var/lib/kandev.db",
		"postgres://watchdogd:%zz@db/kandev":                  "<unparseable database URL>",
		"user=watchdogd password=hunter2 host=db":             "<unparseable database URL>",
		"postgres://watchdogd:p%40ss%3Aw0rd@db/kandev":        "postgres://watchdogd:xxxxx@db/kandev",
		"postgresql://u:hunter2@h1:5432,h2:5432/kandev?x=y":   "postgresql://u:xxxxx@h1:5432,h2:5432/kandev?x=y",
	}
	for raw, want := range cases {
		if got := Redact(raw); got != want {
			t.Errorf("Redact(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestRedactError(t *testing.T) {
	dsn := "postgres://u:hunter2@db/kandev"
	err := RedactError(errors.New("connect to "+dsn+": refused"), dsn)
	if got := err.Error(); got != "connect to postgres://u:xxxxx@db/kandev: refused" {
		t.Errorf("RedactError = %q", got)
	}
	plain := errors.New("refused")
	if got := RedactError(plain, dsn); got != plain { //nolint:errorlint // the same error value, not a wrapped one, is the contract
		t.Errorf("RedactError replaced an error that holds no DSN: %v", got)
	}
	if RedactError(nil, dsn) != nil {
		t.Error("RedactError(nil) is not nil")
	}
}

func TestEscapeSQLitePath(t *testing.T) {
	if got := EscapeSQLitePath("/data/50%?#.db"); got != "/data/50%25%3F%23.db" {
		t.Errorf("EscapeSQLitePath = %q", got)
	}
}
