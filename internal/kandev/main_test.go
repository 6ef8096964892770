package kandev_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/pgtest"
)

// pg is this package's throwaway PostgreSQL server (TestMain starts it).
var pg *pgtest.Server

func TestMain(m *testing.M) {
	os.Exit(pgtest.RunTests(m, func(s *pgtest.Server) { pg = s }))
}

// database is one kandev-shaped database of either dialect.
type database interface {
	URL() string
	Write(ctx context.Context, d kandevdb.Dataset) error
}

type dialectCase struct {
	name string
	make func(t *testing.T, opts kandevdb.Options) database
}

// dialects runs a test body against a fresh SQLite file and a fresh
// PostgreSQL database.
var dialects = []dialectCase{
	{"sqlite", func(t *testing.T, opts kandevdb.Options) database {
		db, err := kandevdb.CreateSQLite(filepath.Join(t.TempDir(), "kandev.db"), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}},
	{"postgres", func(t *testing.T, opts kandevdb.Options) database {
		dsn, err := pg.NewDatabase(context.Background(), "kandev")
		if err != nil {
			t.Fatal(err)
		}
		db, err := kandevdb.CreatePostgres(context.Background(), dsn, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}},
}

func load(t *testing.T, dc dialectCase, ds kandevdb.Dataset, opts kandevdb.Options) database {
	t.Helper()
	db := dc.make(t, opts)
	if err := db.Write(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	return db
}
