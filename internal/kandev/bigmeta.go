package kandev

import (
	"context"
	"database/sql"
	"maps"
	"strconv"

	"github.com/watchdogd/watchdogd/internal/authority"
	"github.com/watchdogd/watchdogd/internal/kandevsql"
	"github.com/watchdogd/watchdogd/internal/model"
)

// readBigMetadata reads the metadata of the current turns' messages that
// was too big to read with the others (kandevsql), cut to what the
// rules and outputs read. It costs nothing when there is none, the usual
// case, and a statement per such message at most.
func (r *Reader) readBigMetadata(ctx context.Context, tx *sql.Tx, snap *model.Snapshot, sessions []model.Session, big []bigAt) error {
	if len(big) == 0 {
		return nil
	}
	keys := make([]string, len(big))
	for i, b := range big {
		keys[i] = b.key
	}
	read := r.bigMetadataPostgres
	if r.dialect == authority.SQLite {
		read = r.bigMetadataSQLite
	}
	got, err := read(ctx, tx, snap, keys)
	if err != nil {
		return err
	}
	for _, b := range big {
		text, ok := got[b.key]
		if !ok {
			continue // not in the snapshot's view: cannot be
		}
		s := &sessions[b.session]
		m := &s.Messages[b.message]
		m.Meta = authority.ParseMetadataText(r.dialect, text)
		if m.Meta.Kind == authority.Malformed {
			snap.Malformed = append(snap.Malformed, model.MessageRow(*m, s.Current.ID))
			s.MalformedMetadata = true
		}
	}
	return nil
}

// bigMetadataSQLite reads each value, by rowid, in a statement of its own
// (see kandevsql.BigMetadataSQLite).
func (r *Reader) bigMetadataSQLite(ctx context.Context, tx *sql.Tx, snap *model.Snapshot, rowids []string) (map[string]string, error) {
	out := make(map[string]string, len(rowids))
	q := kandevsql.BigMetadataSQLite()
	for _, key := range rowids {
		rowid, err := strconv.ParseInt(key, 10, 64)
		if err != nil {
			return nil, r.wrap("read big message metadata", err)
		}
		r.count(snap, q)
		var meta sql.NullString
		switch err := tx.QueryRowContext(ctx, q, rowid).Scan(&meta); err {
		case nil:
			out[key] = meta.String
		case sql.ErrNoRows:
		default:
			return nil, r.wrap("read big message metadata", err)
		}
	}
	return out, nil
}

// bigMetadataPostgres reads the values, by id, in one statement under a
// savepoint. If one is malformed, that statement fails, and each is read on
// its own, a failure marking that one malformed, as kandev itself cannot
// read it. A rollback to the savepoint keeps it set, so each failure costs
// one statement more.
func (r *Reader) bigMetadataPostgres(ctx context.Context, tx *sql.Tx, snap *model.Snapshot, ids []string) (map[string]string, error) {
	if err := r.exec(ctx, tx, snap, "SAVEPOINT watchdogd_metadata"); err != nil {
		return nil, r.wrap("savepoint", err)
	}
	got, err := r.bigMetadataOf(ctx, tx, snap, ids)
	if err != nil && !castFailed(err) {
		return nil, err
	}
	if err != nil {
		got = map[string]string{}
		failed := true
		for _, id := range ids {
			if failed {
				if err := r.exec(ctx, tx, snap, "ROLLBACK TO SAVEPOINT watchdogd_metadata"); err != nil {
					return nil, r.wrap("rollback to savepoint", err)
				}
			}
			one, err := r.bigMetadataOf(ctx, tx, snap, []string{id})
			failed = err != nil
			switch {
			case err == nil:
				maps.Copy(got, one)
			case castFailed(err):
				got[id] = "" // malformed, as an empty text is
			default:
				return nil, err
			}
		}
		if failed {
			if err := r.exec(ctx, tx, snap, "ROLLBACK TO SAVEPOINT watchdogd_metadata"); err != nil {
				return nil, r.wrap("rollback to savepoint", err)
			}
		}
	}
	if err := r.exec(ctx, tx, snap, "RELEASE SAVEPOINT watchdogd_metadata"); err != nil {
		return nil, r.wrap("release savepoint", err)
	}
	return got, nil
}

// bigMetadataOf runs kandevsql.BigMetadataPostgres over ids.
func (r *Reader) bigMetadataOf(ctx context.Context, tx *sql.Tx, snap *model.Snapshot, ids []string) (map[string]string, error) {
	rows, err := r.query(ctx, tx, snap, kandevsql.BigMetadataPostgres(), ids)
	if err != nil {
		return nil, r.wrap("read big message metadata", err)
	}
	defer func() { _ = rows.Close() }()
	out := make(map[string]string, len(ids))
	for rows.Next() {
		var id string
		var meta sql.NullString
		if err := rows.Scan(&id, &meta); err != nil {
			return nil, r.wrap("read big message metadata", err)
		}
		out[id] = meta.String
	}
	if err := rows.Err(); err != nil {
		return nil, r.wrap("read big message metadata", err)
	}
	return out, nil
}
