package daemon

import (
	"github.com/watchdogd/watchdogd/internal/app"
	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/term"
	"go.uber.org/zap"
)

// refresh reads the sources again before a cycle and, when one changed,
// rebuilds the cycle on the new values. A source that cannot be read keeps
// the values in use, logged once per error: a rotation caught half-way
// (a file briefly missing) must not stop the watchdog, and the old token
// may well still work.
func (d *daemon) refresh(cfg *config.Config) {
	src, err := app.ReadSources(d.opts.Inputs, cfg)
	if err == nil {
		changed := d.src.Changed(src)
		if len(changed) == 0 {
			d.srcErr = ""
			return
		}
		if err = d.install(cfg, src); err == nil {
			d.srcErr = ""
			d.log.Info("a secret or URL file changed; the next steps use its new content", zap.Strings("changed", changed))
			return
		}
	}
	if msg := term.OneLine(err); msg != d.srcErr {
		d.srcErr = msg
		d.log.Warn("cannot read a secret or URL file again; still using the values read before", zap.String("err", msg))
	}
}
