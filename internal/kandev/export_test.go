package kandev

import "database/sql"

// DB exposes the reader's connection pool to the read-only tests.
func (r *Reader) DB() *sql.DB { return r.db }

// MetaMemberNames names the metadata members read apart when metadata is
// too big to read whole.
func MetaMemberNames() []string {
	var out []string
	for _, m := range metaMembers() {
		out = append(out, m.name)
	}
	return out
}
