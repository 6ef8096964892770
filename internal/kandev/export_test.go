package kandev

import "database/sql"

// DB exposes the reader's connection pool to the read-only tests.
func (r *Reader) DB() *sql.DB { return r.db }
