package ledger_test

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
)

// rawLedger is a connection to a ledger's tables as goose migrates them,
// outside the Store: where an older watchdogd left them.
func rawLedger(t *testing.T, url string) (*sql.DB, goose.Dialect) {
	t.Helper()
	if path, ok := strings.CutPrefix(url, "sqlite://"); ok {
		db, err := sql.Open("sqlite", path+"?_pragma=foreign_keys(1)")
		if err != nil {
			t.Fatal(err)
		}
		return db, goose.DialectSQLite3
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["search_path"] = "watchdogd"
	db := stdlib.OpenDB(*cfg)
	if _, err := db.Exec("CREATE SCHEMA IF NOT EXISTS watchdogd"); err != nil {
		t.Fatal(err)
	}
	return db, goose.DialectPostgres
}

// migrations are the migration files up to version, as a watchdogd that
// knew only those embedded them.
func migrations(t *testing.T, upTo int) fs.FS {
	t.Helper()
	files, err := fs.Glob(os.DirFS("migrations"), "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	out := fstest.MapFS{}
	for _, f := range files {
		var v int
		if _, err := fmt.Sscanf(f, "%05d_", &v); err != nil {
			t.Fatal(err)
		}
		if v <= upTo {
			b, err := os.ReadFile("migrations/" + f)
			if err != nil {
				t.Fatal(err)
			}
			out[f] = &fstest.MapFile{Data: b}
		}
	}
	return out
}

// TestSilencesMigrateToMatchers: silences an older watchdogd stored, with
// their four equality columns — the CLI's, and a Slack click's kept until
// its finding clears — read after the migration as the same silences,
// their columns now = matchers, values of any bytes kept exactly; they
// match what they matched. Down takes the ledger back: the equality
// silences as they were, one the older watchdogd could not honour gone.
func TestSilencesMigrateToMatchers(t *testing.T) {
	ctx := context.Background()
	for _, d := range dialects[:2] {
		t.Run(d.name, func(t *testing.T) {
			url := d.url(t)
			db, dialect := rawLedger(t, url)
			defer func() { _ = db.Close() }()
			old, err := goose.NewProvider(dialect, db, migrations(t, 4), goose.WithDisableGlobalRegistry(true))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := old.Up(ctx); err != nil {
				t.Fatal(err)
			}
			until, created := t0.Add(time.Hour).UnixMicro(), t0.UnixMicro()
			odd := "s-\"quoted\" \\ back\nline"
			for _, row := range []struct {
				id, ws, task, session, kind, by, identity string
				clear                                     int
				expired                                   any
			}{
				{"cli00001", "ws-1", "", "", "stalled_turn", "oncall", "", 0, nil},
				{"cli00002", "", "t1", odd, "", "oncall", "", 0, nil},
				{"slack-0123456789abcdef", "", "", "s1", "unanswered_clarification", "slack:U1", "clarification|s1|turn-1|p1", 1, nil},
				{"cli00003", "ws-2", "", "", "", "", "", 0, created},
			} {
				if _, err := db.ExecContext(ctx, rebind(dialect, `INSERT INTO silences (id, workspace_id, task_id, session_id, kind, comment, created_by, created_us, until_us, expired_us, until_clear, identity)
					VALUES (?, ?, ?, ?, ?, 'why', ?, ?, ?, ?, ?, ?)`), row.id, row.ws, row.task, row.session, row.kind, row.by, created, until, row.expired, row.clear, row.identity); err != nil {
					t.Fatal(err)
				}
			}

			s := open(t, url) // migrates to this build's newest
			all, err := s.Silences(ctx, t0, true)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				"cli00001":               `workspace_id="ws-1" kind="stalled_turn"`,
				"cli00002":               `task_id="t1" session_id="s-\"quoted\" \\ back\nline"`,
				"slack-0123456789abcdef": `session_id="s1" kind="unanswered_clarification"`,
				"cli00003":               `workspace_id="ws-2"`,
			}
			if len(all) != len(want) {
				t.Fatalf("%d silences after the migration, want %d: %+v", len(all), len(want), all)
			}
			byID := map[string]ledger.Silence{}
			for _, v := range all {
				byID[v.ID] = v
				if got := v.Matchers.String(); got != want[v.ID] {
					t.Errorf("%s: matchers %s, want %s", v.ID, got, want[v.ID])
				}
				if !v.Until.Equal(t0.Add(time.Hour)) || !v.CreatedAt.Equal(t0) || v.Comment != "why" {
					t.Errorf("%s: %+v", v.ID, v)
				}
			}
			click := byID["slack-0123456789abcdef"]
			if !click.UntilClear || click.Identity != "clarification|s1|turn-1|p1" || click.CreatedBy != "slack:U1" || !click.Active(t0) {
				t.Errorf("the click's silence after the migration: %+v", click)
			}
			if session, ok := click.Matchers.EqualValue("session_id"); !ok || session != "s1" {
				t.Errorf("the click's silence lost its session: %q", session)
			}
			if byID["cli00003"].Active(t0) {
				t.Error("the expired silence is active again")
			}
			ep := model.Episode{SessionID: odd, TaskID: "t1", Kind: model.KindStalledTurn}
			if !byID["cli00002"].Matchers.Matches(ep) {
				t.Error("the silence on an odd session id no longer matches it")
			}
			if ep.TaskID = "t2"; byID["cli00002"].Matchers.Matches(ep) {
				t.Error("the silence matches another task")
			}

			// A silence only this build can hold, then back down.
			re, err := model.ParseMatcher("workspace_id=~ws-.*")
			if err != nil {
				t.Fatal(err)
			}
			if err := s.AddSilence(ctx, ledger.Silence{ID: "cli00004", Matchers: model.Matchers{re}, CreatedAt: t0, Until: t0.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			_ = s.Close()
			// Every migration this build has: the ledger is at the newest,
			// and down from there to before the matchers runs each Down.
			newest, err := goose.NewProvider(dialect, db, migrations(t, 1<<30), goose.WithDisableGlobalRegistry(true))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := newest.DownTo(ctx, 4); err != nil {
				t.Fatal(err)
			}
			rows, err := db.QueryContext(ctx, "SELECT id, workspace_id, task_id, session_id, kind FROM silences ORDER BY id")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for rows.Next() {
				var id, ws, task, session, kind string
				if err := rows.Scan(&id, &ws, &task, &session, &kind); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%s:%s|%s|%q|%s", id, ws, task, session, kind))
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
			wantDown := []string{`cli00001:ws-1||""|stalled_turn`, fmt.Sprintf("cli00002:|t1|%q|", odd), `cli00003:ws-2||""|`,
				`slack-0123456789abcdef:||"s1"|unanswered_clarification`}
			if strings.Join(got, "\n") != strings.Join(wantDown, "\n") {
				t.Errorf("after down:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantDown, "\n"))
			}
		})
	}
}

// rebind turns ? placeholders into PostgreSQL's $n.
func rebind(d goose.Dialect, q string) string {
	if d != goose.DialectPostgres {
		return q
	}
	for n := 1; strings.Contains(q, "?"); n++ {
		q = strings.Replace(q, "?", fmt.Sprintf("$%d", n), 1)
	}
	return q
}
