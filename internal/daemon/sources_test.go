package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/watchdogd/watchdogd/internal/app"
	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/metrics"
)

// TestRefreshRereadsSources: before each cycle the daemon reads the files
// behind its URLs and tokens again; a change rebuilds the cycle on the new
// values and names what changed (never the value), a file that cannot be
// read keeps the values in use and warns once, and the environment keeps
// winning over a file.
func TestRefreshRereadsSources(t *testing.T) {
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name) }
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(file(name), []byte(content+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("db", "sqlite:///kandev/one.db")
	write("state", "sqlite:///state/one.db")
	write("kandev", "pat-one")
	write("slack", "xoxb-one")
	cfg := config.Default()
	cfg.Database.URL, cfg.Database.URLFile, cfg.State.URLFile = "", file("db"), file("state")
	cfg.Kandev.TokenFile = file("kandev")
	cfg.Slack = &config.Slack{TokenFile: file("slack"), Timeout: cfg.CycleTimeout}
	env := map[string]string{}
	core, logs := observer.New(zapcore.InfoLevel)
	d := &daemon{opts: Options{Inputs: app.Inputs{Getenv: func(k string) string { return env[k] }}}, log: zap.New(core),
		m: metrics.New(prometheus.NewRegistry(), "test"), holder: "test"}
	src, err := app.ReadSources(d.opts.Inputs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.install(cfg, src); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name   string
		change func()
		want   []string // the names logged as changed, nil for no rebuild
		warns  int      // warnings it logs
	}{
		{"nothing changed", func() {}, nil, 0},
		{"the slack token rotated", func() { write("slack", "xoxb-two") }, []string{"slack token"}, 0},
		// A PostgreSQL password rotated in the URL files, and the PAT.
		{"both URLs and the kandev token", func() {
			write("db", "sqlite:///kandev/two.db")
			write("state", "sqlite:///state/two.db")
			write("kandev", "pat-two")
		}, []string{"database URL", "state URL", "kandev token"}, 0},
		// A rotation caught half-way: the values in use stay, and one
		// warning says why, however many cycles it lasts.
		{"the token file is gone", func() { _ = os.Remove(file("slack")) }, nil, 1},
		{"still gone", func() {}, nil, 0},
		{"back, unchanged", func() { write("slack", "xoxb-two") }, nil, 0},
		{"gone again: warned again", func() { _ = os.Remove(file("slack")) }, nil, 1},
		// The environment wins over the file, as at start.
		{"the env var set", func() { env["WATCHDOGD_SLACK_TOKEN"] = "xoxb-env" }, []string{"slack token"}, 0},
		{"the file changes under the env var", func() { write("slack", "xoxb-three") }, nil, 0},
	}
	for _, s := range steps {
		before := d.cycle
		s.change()
		d.refresh(cfg)
		var changed []string
		warns := 0
		for _, e := range logs.TakeAll() {
			switch {
			case strings.Contains(e.Message, "secret or URL file changed"):
				changed = append(changed, fmt.Sprint(e.ContextMap()["changed"]))
			case strings.Contains(e.Message, "cannot read a secret or URL file again"):
				warns++
			}
			if line := e.Message + fmt.Sprint(e.ContextMap()); strings.Contains(line, "xoxb-") || strings.Contains(line, "pat-") {
				t.Errorf("%s: a token reached the log: %s", s.name, line)
			}
		}
		if want := fmt.Sprint(s.want); s.want == nil && len(changed) != 0 || s.want != nil && (len(changed) != 1 || changed[0] != want) {
			t.Errorf("%s: logged %v as changed, want %v", s.name, changed, s.want)
		}
		if rebuilt := d.cycle != before; rebuilt != (s.want != nil) {
			t.Errorf("%s: cycle rebuilt = %v", s.name, rebuilt)
		}
		if warns != s.warns {
			t.Errorf("%s: %d warnings, want %d", s.name, warns, s.warns)
		}
	}
	want := app.Sources{Database: "sqlite:///kandev/two.db", State: "sqlite:///state/two.db", Slack: "xoxb-env", Kandev: "pat-two"}
	got := d.src
	got.DatabaseFrom, got.StateFrom = "", "" // where they came from: the files, as before
	if got != want || d.reader.URL != want.Database || d.storeURL != want.State {
		t.Errorf("in use: %+v (reader %s, ledger %s), want %+v", d.src, d.reader.URL, d.storeURL, want)
	}
}
