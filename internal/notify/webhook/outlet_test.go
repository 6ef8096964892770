package webhook

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
)

// TestTransportErrorHidesTheURL: a receiver that cannot be reached fails
// the attempt with an error that names the webhook, not its URL, whose
// path or query may carry a token; the error still means "retry".
func TestTransportErrorHidesTheURL(t *testing.T) {
	o := New([]config.Webhook{{Name: "ops", URL: "http://127.0.0.1:1/hooks/T0K3N-path?token=T0K3N-query", SecretFile: "hook", Timeout: 2 * time.Second}})
	o.ReadFile = func(string) ([]byte, error) { return []byte("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), nil }
	s := o.Send(context.Background(), notify.Attempt{Action: model.Action{Key: "k1", Channel: "ops", Body: "{}"}, Now: time.Now()})
	if s.Err == nil || !s.Verdict.Retry {
		t.Fatalf("an unreachable receiver: %+v, want an error worth retrying", s)
	}
	if msg := s.Err.Error(); strings.Contains(msg, "T0K3N") || !strings.Contains(msg, "webhook ops") {
		t.Errorf("error %q: want the webhook's name and not its URL", msg)
	}
}
