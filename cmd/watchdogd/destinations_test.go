package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
	"github.com/watchdogd/watchdogd/internal/model"
)

// alertsReceiver records the alerts POSTed to Alertmanager's
// /api/v2/alerts and answers 200, as Alertmanager does.
type alertsReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	alerts []map[string]any
}

func newAlertsReceiver(t *testing.T) *alertsReceiver {
	r := &alertsReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var got []map[string]any
		if req.Method != http.MethodPost || req.URL.Path != "/api/v2/alerts" || json.Unmarshal(body, &got) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.alerts = append(r.alerts, got...)
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

// names are the alertnames received, one per alert posted.
func (r *alertsReceiver) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, a := range r.alerts {
		labels, _ := a["labels"].(map[string]any)
		name, _ := labels["alertname"].(string)
		out = append(out, name)
	}
	return out
}

// TestSlackAndAlertmanagerBothSent: with Slack now and Alertmanager a
// second later (check-config says SUCCESS), a stall found at stall_after
// has both steps due at once, and both go out: the Slack post (in the
// past, the alert replaced it and nothing was posted) and the alert; each
// once, through the real binary, kandev's rows on SQLite and PostgreSQL.
func TestSlackAndAlertmanagerBothSent(t *testing.T) {
	for _, dialect := range kandevDialects {
		t.Run(dialect, func(t *testing.T) {
			am := newAlertsReceiver(t)
			b := kandevdb.NewBuilder(time.Now())
			s := b.Session("sess-stall", "Fix login", "ws-web", "RUNNING", time.Hour, "")
			s.Turn("turn-stall", 40*time.Minute, -1, "").Message("user", "message", "Fix it", 40*time.Minute, "").Agent("tool_call", 20*time.Minute)
			e, k := newEnvOn(t, dialect, b.DS, `alertmanager:
  urls: [`+am.URL+`]
  timeout: 1s
policy:
  stalled_turn:
    steps:
      - {after: 0s, action: slack}
      - {after: 1s, action: alertmanager}
`)
			e.once(k.args...)
			e.once(k.args...)
			if n := len(e.slack.Messages()); n != 1 {
				t.Fatalf("%d Slack posts, want the stall's one", n)
			}
			if names := am.names(); len(names) == 0 || names[0] != "KandevStalledTurn" {
				t.Fatalf("alerts %v, want the stall's", names)
			}
			e.exactlyOnce()
			states := map[model.ActionKind]model.State{}
			for _, a := range e.actions() {
				states[a.Kind] = a.State
			}
			if states[model.ActionSlack] != model.StateDelivered || states[model.ActionAlertmanager] != model.StateDelivered || len(states) != 2 {
				t.Fatalf("actions %v, want the Slack post and the alert delivered", states)
			}
		})
	}
}
