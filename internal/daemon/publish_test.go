package daemon

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/watchdogd/watchdogd/internal/config"
)

// TestLogFollowsPublish: when "cycle failed" (or "cycle recovered") is
// logged, the API already shows that cycle's last_error (or none), so
// whoever acts on the log line reads the same from the API.
func TestLogFollowsPublish(t *testing.T) {
	d := &daemon{reg: prometheus.NewRegistry()}
	d.cfg.Store(&config.Config{})
	h := d.handler()
	// seen is what the API said at the moment each line was logged.
	seen := map[string]string{}
	hook := func(e zapcore.Entry) error {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/v1/findings", nil))
		var api struct {
			LastError string `json:"last_error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &api); w.Code == http.StatusOK && err == nil {
			seen[e.Message] = "last_error=" + api.LastError
		} else {
			seen[e.Message] = w.Body.String()
		}
		return nil
	}
	core, _ := observer.New(zapcore.InfoLevel)
	d.log = zap.New(core, zap.Hooks(hook))
	now := time.Now()
	d.failed(errors.New("scan: connection refused"), newView(storm(2, now), nil, "http://kandev", now), now)
	d.succeeded(newView(storm(2, now), nil, "http://kandev", now))
	for msg, want := range map[string]string{
		"cycle failed":    "last_error=scan: connection refused",
		"cycle recovered": "last_error=",
	} {
		if got, ok := seen[msg]; !ok || got != want {
			t.Errorf("when %q was logged the API said %q, want %q", msg, got, want)
		}
	}
}
