package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/kandevtest"
)

// runDemo builds a kandev-shaped SQLite database in a temporary directory
// holding one session per finding kind plus healthy ones, scans it, and
// prints the report.
func runDemo(ctx context.Context, opts Options) error {
	dir, err := os.MkdirTemp("", "watchdogd-demo-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	now := opts.now()
	db, err := kandevtest.CreateSQLite(filepath.Join(dir, "kandev.db"), kandevtest.Options{})
	if err != nil {
		return err
	}
	if err := db.Write(ctx, kandevtest.Demo(now)); err != nil {
		_ = db.Close()
		return fmt.Errorf("build demo database: %w", err)
	}
	if err := db.Close(); err != nil {
		return err
	}
	cfg := config.Default()
	if opts.ConfigFile != "" {
		if cfg, err = config.Load(opts.ConfigFile, opts.Getenv); err != nil {
			return err
		}
	}
	fmt.Fprintf(opts.Stdout, "Demo kandev database: %s (removed on exit)\n\n", db.Path)
	rep, err := scanOnce(ctx, db.URL(), cfg, now)
	if err != nil {
		return err
	}
	format := opts.Output
	if format == "" {
		format = "table"
	}
	return printReport(opts.Stdout, format, rep)
}
