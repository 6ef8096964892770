package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

// generatorVersion names the cached SQLite datasets; bump it when Generate
// or kandevdb's indexes change.
const generatorVersion = "v3"

// database is a loaded dataset on one dialect.
type database struct {
	dialect string
	url     string
	// grown returns a copy of the dataset with spec's terminal history
	// added, leaving this one as it is, so that the scan can be timed on
	// both in interleaved rounds. Nothing may be connected to this dataset
	// while it is copied.
	grown func(ctx context.Context, spec kandevdb.Spec) (*database, error)
	close func()
}

func (cfg Config) spec(size Size) kandevdb.Spec {
	return kandevdb.Spec{Sessions: size.Sessions, ActiveFraction: size.Active, TurnsPerSession: size.TurnsPerSession,
		MessagesPerTurn: size.MessagesPerTurn, Seed: 42, Now: cfg.Now}
}

// load builds the dataset: SQLite files are generated once into the cache
// and copied per run; PostgreSQL databases are loaded with COPY each run.
func (cfg Config) load(ctx context.Context, dialect string, size Size) (*database, error) {
	load := cfg.loadSQLite
	if dialect == "postgres" {
		load = cfg.loadPostgres
	}
	db, err := load(ctx, size)
	if err != nil {
		return nil, fmt.Errorf("load the %s dataset into %s: %w", size.Name, dialect, err)
	}
	return db, nil
}

// kandevDB is what loading needs of a kandev-shaped database of either
// dialect.
type kandevDB interface {
	writer
	CreateIndexes(ctx context.Context) error
}

// writer is what adding rows needs of a kandev-shaped database.
type writer interface {
	Write(ctx context.Context, d kandevdb.Dataset) error
}

// addRows writes the dataset spec generates.
func addRows(ctx context.Context, spec kandevdb.Spec, db writer) error {
	return kandevdb.Generate(spec, func(d kandevdb.Dataset) error { return db.Write(ctx, d) })
}

// fill writes the generated dataset, then creates the indexes (after the
// rows, as a restore would).
func fill(ctx context.Context, spec kandevdb.Spec, db kandevDB) error {
	if err := addRows(ctx, spec, db); err != nil {
		return err
	}
	return db.CreateIndexes(ctx)
}

// loadPostgres loads the dataset into a fresh database on the run's server,
// indexes created after the rows as a restore would. Closing the dataset or
// its grown copy drops it: at the large size each is gigabytes.
func (cfg Config) loadPostgres(ctx context.Context, size Size) (*database, error) {
	spec := cfg.spec(size)
	dsn, err := cfg.PG.NewDatabase(ctx, "bench_"+size.Name)
	if err != nil {
		return nil, err
	}
	pg, err := kandevdb.CreatePostgres(ctx, dsn, kandevdb.Options{DeferIndexes: true})
	if err != nil {
		cfg.drop(dsn)
		return nil, err
	}
	if err := fill(ctx, spec, pg); err != nil {
		_ = pg.Close()
		cfg.drop(dsn)
		return nil, err
	}
	var closeOnce sync.Once
	closeWriter := func() { closeOnce.Do(func() { _ = pg.Close() }) }
	return &database{dialect: "postgres", url: dsn, close: func() { closeWriter(); cfg.drop(dsn) },
		grown: func(ctx context.Context, s kandevdb.Spec) (*database, error) {
			closeWriter() // a template database must have no other connection
			copyDSN, err := cfg.PG.CopyDatabase(ctx, dsn, "bench_"+size.Name+"_grown")
			if err != nil {
				return nil, err
			}
			grown, err := growPostgres(ctx, copyDSN, s)
			if err != nil {
				cfg.drop(copyDSN)
				return nil, err
			}
			return &database{dialect: "postgres", url: copyDSN, close: func() { _ = grown.Close(); cfg.drop(copyDSN) }}, nil
		}}, nil
}

// growPostgres adds spec's rows to the database at dsn and gathers its
// statistics again, as autovacuum would after them.
func growPostgres(ctx context.Context, dsn string, spec kandevdb.Spec) (*kandevdb.Postgres, error) {
	pg, err := kandevdb.OpenPostgres(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := addRows(ctx, spec, pg); err != nil {
		_ = pg.Close()
		return nil, err
	}
	if err := pg.Analyze(ctx); err != nil {
		_ = pg.Close()
		return nil, err
	}
	return pg, nil
}

// drop drops a benchmark database. A failure leaves it on disk until the
// server stops, which the log says.
func (cfg Config) drop(dsn string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cfg.PG.DropDatabase(ctx, dsn); err != nil && cfg.Log != nil {
		fmt.Fprintf(cfg.Log, "# %v: it stays until the server stops\n", err)
	}
}

// loadSQLite generates the dataset's file once into the cache (per generator
// version and day) and copies it for the run.
func (cfg Config) loadSQLite(ctx context.Context, size Size) (*database, error) {
	spec := cfg.spec(size)
	base := filepath.Join(cfg.CacheDir, fmt.Sprintf("%s-%s-%d.db", size.Name, generatorVersion, cfg.Now.Unix()/86400))
	if _, err := os.Stat(base); err != nil {
		if err := os.MkdirAll(cfg.CacheDir, 0o755); err != nil {
			return nil, err
		}
		tmp := base + ".tmp"
		_ = os.Remove(tmp)
		lite, err := kandevdb.CreateSQLite(tmp, kandevdb.Options{DeferIndexes: true})
		if err != nil {
			return nil, err
		}
		if err := fill(ctx, spec, lite); err != nil {
			_ = lite.Close()
			return nil, err
		}
		if _, err := lite.DB().ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			return nil, err
		}
		_ = lite.Close()
		if err := os.Rename(tmp, base); err != nil {
			return nil, err
		}
		pruneCache(cfg.CacheDir, size.Name, base)
	}
	work := filepath.Join(cfg.CacheDir, "work-"+size.Name+".db")
	if err := exec.CommandContext(ctx, "cp", base, work).Run(); err != nil {
		return nil, err
	}
	return &database{dialect: "sqlite", url: "sqlite://" + work, close: func() { removeSQLite(work) },
		grown: func(ctx context.Context, s kandevdb.Spec) (*database, error) {
			grown := filepath.Join(cfg.CacheDir, "work-"+size.Name+"-grown.db")
			if err := exec.CommandContext(ctx, "cp", work, grown).Run(); err != nil {
				return nil, err
			}
			db := &database{dialect: "sqlite", url: "sqlite://" + grown, close: func() { removeSQLite(grown) }}
			lite, err := kandevdb.OpenSQLite(grown)
			if err != nil {
				db.close()
				return nil, err
			}
			defer func() { _ = lite.Close() }()
			if err := addRows(ctx, s, lite); err != nil {
				db.close()
				return nil, err
			}
			return db, nil
		}}, nil
}

// pruneCache removes the size's datasets of other days and generator
// versions, which a new one replaces: each large file is gigabytes, and
// one a day would fill the disk of a machine that benchmarks daily.
func pruneCache(dir, size, keep string) {
	old, _ := filepath.Glob(filepath.Join(dir, size+"-*.db*"))
	for _, path := range old {
		if path != keep {
			_ = os.Remove(path)
		}
	}
}

// removeSQLite removes a database file and its WAL files.
func removeSQLite(path string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(path + suffix)
	}
}
