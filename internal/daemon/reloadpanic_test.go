package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/robfig/cron/v3"
	"github.com/watchdogd/watchdogd/internal/app"
	"github.com/watchdogd/watchdogd/internal/metrics"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestReloadPanicSaysWhatIsInEffect: a reload that panics keeps the daemon
// running and its log line says truly which configuration is in effect:
// the previous one after a panic before the new one was installed (here
// reading its sources), the new one after a panic past that point (here
// the final log line).
func TestReloadPanicSaysWhatIsInEffect(t *testing.T) {
	cases := []struct {
		name      string
		panicEnv  string // the environment lookup that panics
		panicLog  string // the log line whose writing panics
		installed bool
		want      string
	}{
		{"reading the sources", "WATCHDOGD_KANDEV_TOKEN", "", false, "the previous configuration stays in effect"},
		{"after installing", "", "config reloaded", true, "the new configuration: it is in effect"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		file := filepath.Join(dir, "watchdogd.yaml")
		write := func(schedule string) {
			text := "schedule: \"" + schedule + "\"\ndatabase:\n  url: sqlite://" + dir + "/kandev.db\nstate:\n  url: sqlite://" + dir + "/state.db\n"
			if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		write("@every 1m")
		env := func(string) string { return "" }
		core, logs := observer.New(zapcore.InfoLevel)
		hook := func(e zapcore.Entry) error {
			if c.panicLog != "" && e.Message == c.panicLog {
				panic("exploded while logging")
			}
			return nil
		}
		d := &daemon{opts: Options{Inputs: app.Inputs{ConfigFile: file, Getenv: func(k string) string { return env(k) }}},
			log: zap.New(core, zap.Hooks(hook)), level: zap.NewAtomicLevel(), m: metrics.New(prometheus.NewRegistry(), "test"),
			holder: "test", sched: cron.New()}
		cfg, err := app.LoadConfig(d.opts.Inputs)
		if err != nil {
			t.Fatal(err)
		}
		src, err := app.ReadSources(d.opts.Inputs, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.install(cfg, src); err != nil {
			t.Fatal(err)
		}
		before := d.cycle
		d.m.ReloadSuccess.Set(1)
		write("@every 5m")
		env = func(k string) string {
			if k == c.panicEnv {
				panic("exploded while reading " + k)
			}
			return ""
		}
		if err := d.safeReload(); err == nil || !strings.Contains(err.Error(), "exploded") {
			t.Fatalf("%s: reload: %v", c.name, err)
		}
		var lines []string
		for _, e := range logs.FilterLevelExact(zapcore.ErrorLevel).All() {
			lines = append(lines, e.Message)
		}
		if len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("%s: logged %q, want one line saying %q", c.name, lines, c.want)
		}
		if installed := d.cfg.Load() != cfg; installed != c.installed || (d.cycle != before) != c.installed {
			t.Errorf("%s: new config installed = %v, cycle replaced = %v, want %v", c.name, installed, d.cycle != before, c.installed)
		}
		if got := testutil.ToFloat64(d.m.ReloadSuccess); got != 0 {
			t.Errorf("%s: config_last_reload_successful %v, want 0", c.name, got)
		}
	}
}
