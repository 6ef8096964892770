package main

import (
	"context"
	"testing"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

// postgresKandev is a new PostgreSQL database on the tests' server holding
// ds in kandev's schema, closed after writing; it returns its URL.
func postgresKandev(t *testing.T, name string, ds kandevdb.Dataset) string {
	t.Helper()
	ctx := context.Background()
	dsn, err := pg.NewDatabase(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	db, err := kandevdb.CreatePostgres(ctx, dsn, kandevdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if err := db.Write(ctx, ds); err != nil {
		t.Fatal(err)
	}
	return dsn
}
