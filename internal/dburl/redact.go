package dburl

import (
	"errors"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Unparseable stands in for a database URL that cannot be read: no part of
// it is printed, since where the password ends is then unknown.
const Unparseable = "<unparseable database URL>"

// Redact returns a database URL fit for a log line. A PostgreSQL URL is
// read by pgx, the parser that connects (it reads userinfo as libpq does:
// "alice:#pw@db" and "alice:2024?pw@db" are a user and a password, where
// net/url sees a fragment or a query), and printed from what pgx read:
// user (":xxxxx" when a password is set), every host and port, database.
// Its query settings are left out: pgx passes any key it does not know to
// the server, so a misspelt password key would be printed with its value.
// A SQLite URL is a path and is printed as given; anything else is
// Unparseable.
func Redact(raw string) string {
	switch {
	case raw == "":
		return ""
	case strings.HasPrefix(raw, "sqlite://"):
		return raw
	case !isPostgres(raw):
		return Unparseable
	}
	cfg, err := pgx.ParseConfig(raw)
	if err != nil {
		return Unparseable
	}
	u := url.URL{Scheme: raw[:strings.Index(raw, "://")], Path: "/" + cfg.Database}
	switch {
	case cfg.Password != "":
		u.User = url.UserPassword(cfg.User, "xxxxx")
	case cfg.User != "":
		u.User = url.User(cfg.User)
	}
	hosts := []string{hostPort(cfg.Host, cfg.Port)}
	for _, f := range cfg.Fallbacks {
		// sslmode=prefer lists each host twice, with TLS and without.
		if hp := hostPort(f.Host, f.Port); !slices.Contains(hosts, hp) {
			hosts = append(hosts, hp)
		}
	}
	u.Host = strings.Join(hosts, ",")
	return u.String()
}

func hostPort(host string, port uint16) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// RedactError makes an error from opening dsn fit for a log line: pgx's
// parse errors quote the connection string redacted only on a best-effort
// basis, so they are replaced by what failed without the string; dsn
// itself, wherever an error quotes it, is replaced by Redact(dsn).
func RedactError(err error, dsn string) error {
	if err == nil || dsn == "" {
		return err
	}
	var pce *pgconn.ParseConfigError
	if errors.As(err, &pce) {
		return errors.New("cannot parse the PostgreSQL URL: " + parseReason(pce) + " (the URL is not printed: it may hold a password)")
	}
	if !strings.Contains(err.Error(), dsn) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), dsn, Redact(dsn)))
}

// parseReason is what pgx says failed, without the connection string and
// without the underlying error, which may quote parts of it (a URL
// parser's error quotes the URL; a query key's error, the key and value).
func parseReason(pce *pgconn.ParseConfigError) string {
	bare := *pce
	bare.ConnString = ""
	msg := strings.TrimPrefix(bare.Error(), "cannot parse ``: ")
	if inner := errors.Unwrap(pce); inner != nil {
		msg = strings.TrimSuffix(msg, " ("+inner.Error()+")")
	}
	return msg
}

// secretKeys are the connection settings that hold a secret: the password
// (userinfo or query) and the passphrase of the client key.
var secretKeys = map[string]bool{"password": true, "sslpassword": true}

// WrittenSecrets names the secret settings written in a PostgreSQL URL
// itself, as pgx reads it (a password from PGPASSWORD or a passfile is not
// written in it). pgx reports the keys a URL sets only one at a time, as
// the first one outside an allow-list, so the list grows by each key
// reported until the URL passes. The error is pgx's when it cannot read
// the URL at all, without the URL.
func WrittenSecrets(raw string) ([]string, error) {
	var secrets []string
	allowed := []string{}
	// Each round names one more key: the URL's '&'s bound how many it
	// sets, beside the keys its userinfo, hosts and path set.
	for range strings.Count(raw, "&") + 8 {
		_, err := pgconn.ParseConfigWithOptions(raw, pgconn.ParseConfigOptions{ConnStringAllowedKeys: allowed})
		var pce *pgconn.ParseConfigError
		if !errors.As(err, &pce) {
			return secrets, nil // parsed, or failed beyond the URL (a TLS file, a service)
		}
		reason := parseReason(pce)
		key, ok := notAllowedKey(reason)
		if !ok {
			if strings.HasPrefix(reason, "failed to parse as") {
				return nil, errors.New(reason)
			}
			return secrets, nil
		}
		if secretKeys[key] {
			secrets = append(secrets, key)
		}
		allowed = append(allowed, key)
	}
	return secrets, nil
}

// notAllowedKey reads the key out of pgx's "connection string key %q is
// not in ConnStringAllowedKeys".
func notAllowedKey(reason string) (string, bool) {
	q, ok := strings.CutPrefix(reason, "connection string key ")
	if !ok {
		return "", false
	}
	q, ok = strings.CutSuffix(q, " is not in ConnStringAllowedKeys")
	if !ok {
		return "", false
	}
	key, err := strconv.Unquote(q)
	return key, err == nil
}
