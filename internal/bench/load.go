package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/watchdogd/watchdogd/internal/kandevtest"
)

// generatorVersion names the cached SQLite datasets; bump it when Generate
// or kandevtest's indexes change.
const generatorVersion = "v3"

// database is a loaded dataset on one dialect.
type database struct {
	dialect string
	url     string
	// grow adds terminal history to the dataset.
	grow  func(ctx context.Context, spec kandevtest.Spec) error
	close func()
}

func (cfg Config) spec(size Size) kandevtest.Spec {
	return kandevtest.Spec{Sessions: size.Sessions, ActiveFraction: size.Active, TurnsPerSession: size.TurnsPerSession,
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
	Write(ctx context.Context, d kandevtest.Dataset) error
	CreateIndexes(ctx context.Context) error
}

// fill writes the generated dataset, then creates the indexes (after the
// rows, as a restore would).
func fill(ctx context.Context, spec kandevtest.Spec, db kandevDB) error {
	if err := kandevtest.Generate(spec, func(d kandevtest.Dataset) error { return db.Write(ctx, d) }); err != nil {
		return err
	}
	return db.CreateIndexes(ctx)
}

// loadPostgres loads the dataset into a fresh database on the run's server,
// indexes created after the rows as a restore would.
func (cfg Config) loadPostgres(ctx context.Context, size Size) (*database, error) {
	spec := cfg.spec(size)
	dsn, err := cfg.PG.NewDatabase(ctx, "bench_"+size.Name)
	if err != nil {
		return nil, err
	}
	pg, err := kandevtest.CreatePostgres(ctx, dsn, kandevtest.Options{DeferIndexes: true})
	if err != nil {
		return nil, err
	}
	if err := fill(ctx, spec, pg); err != nil {
		return nil, err
	}
	return &database{dialect: "postgres", url: dsn, close: func() { _ = pg.Close() },
		grow: func(ctx context.Context, s kandevtest.Spec) error {
			if err := kandevtest.Generate(s, func(d kandevtest.Dataset) error { return pg.Write(ctx, d) }); err != nil {
				return err
			}
			return pg.Analyze(ctx)
		}}, nil
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
		lite, err := kandevtest.CreateSQLite(tmp, kandevtest.Options{DeferIndexes: true})
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
	}
	work := filepath.Join(cfg.CacheDir, "work-"+size.Name+".db")
	if err := exec.CommandContext(ctx, "cp", base, work).Run(); err != nil {
		return nil, err
	}
	return &database{dialect: "sqlite", url: "sqlite://" + work,
		close: func() { _ = os.Remove(work); _ = os.Remove(work + "-wal"); _ = os.Remove(work + "-shm") },
		grow: func(ctx context.Context, s kandevtest.Spec) error {
			lite, err := kandevtest.OpenSQLite(work)
			if err != nil {
				return err
			}
			defer func() { _ = lite.Close() }()
			return kandevtest.Generate(s, func(d kandevtest.Dataset) error { return lite.Write(ctx, d) })
		}}, nil
}
