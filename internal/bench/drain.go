package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"

	"github.com/watchdogd/watchdogd/internal/kandev"
)

// querier is what drain needs of a connection or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// drain runs a statement and reads its rows without decoding them.
func drain(ctx context.Context, db querier, query string, args ...any) error {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	return eachRow(rows, func([]sql.RawBytes) {})
}

// eachRow scans every row into one value per column, hands the values to
// visit, and returns what ended the rows.
func eachRow[T any](rows *sql.Rows, visit func(vals []T)) error {
	cols, err := rows.Columns()
	if err != nil {
		_ = rows.Close()
		return err
	}
	vals := make([]T, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			_ = rows.Close()
			return err
		}
		visit(vals)
	}
	return rowsDone(rows)
}

// rowsDone closes rows and returns what ended them. Close alone drops the
// error that stopped Next, so a statement that failed after sending some of
// its rows would be timed as a shorter run that succeeded.
func rowsDone(rows *sql.Rows) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

// explain prints the scan statements' plans.
func explain(ctx context.Context, w io.Writer, r *kandev.Reader, raw *sql.DB, dialect string) error {
	stmts, err := scanStatements(ctx, r, dialect == "postgres")
	if err != nil {
		return err
	}
	if err := printPlan(ctx, w, raw, dialect, "sessions", stmts.sessions); err != nil {
		return err
	}
	return printPlan(ctx, w, raw, dialect, "messages", stmts.messages, stmts.args...)
}

// printPlan prints one statement's plan under a heading of its own. A plan
// cut short, by the server or by the file it goes to, is an error: the
// plans `make bench` writes (-explain) are this output.
func printPlan(ctx context.Context, w io.Writer, raw *sql.DB, dialect, name, query string, args ...any) error {
	prefix := "EXPLAIN QUERY PLAN "
	if dialect == "postgres" {
		prefix = "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) "
	}
	out := &errWriter{w: w}
	fmt.Fprintf(out, "\n### %s: %s statement\n\n```\n", dialect, name)
	rows, err := raw.QueryContext(ctx, prefix+query, args...)
	if err != nil {
		return fmt.Errorf("explain %s: %w", name, err)
	}
	err = eachRow(rows, func(vals []any) {
		if dialect == "sqlite" {
			fmt.Fprintf(out, "%v|%v %v\n", vals[0], vals[1], vals[3])
		} else {
			fmt.Fprintln(out, vals[len(vals)-1])
		}
	})
	if err != nil {
		return fmt.Errorf("explain %s: %w", name, err)
	}
	fmt.Fprintln(out, "```")
	if out.err != nil {
		return fmt.Errorf("write the %s statement's plan: %w", name, out.err)
	}
	return nil
}

// errWriter keeps the first write error, so that a run of prints is checked
// once, at its end.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
