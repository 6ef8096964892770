package dburl

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// RefusedStartupParams is a connection pooler's answer to startup
// parameters it does not track (PgBouncer by default: "unsupported startup
// parameter", SQLSTATE 08P01). Both of watchdogd's PostgreSQL connections
// send settings at startup and fall back to another way when refused.
func RefusedStartupParams(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "08P01" && strings.Contains(pgErr.Message, "unsupported startup parameter")
}
