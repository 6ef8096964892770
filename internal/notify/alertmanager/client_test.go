package alertmanager

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/policy"
)

// TestRedirectNotFollowed: an Alertmanager behind a proxy that redirects
// the POST (http to https, a path rewrite) is not taken to have the
// alerts: following would turn the POST into a GET, answered 200, with
// the credentials on it. The redirect fails the attempt, for good.
func TestRedirectNotFollowed(t *testing.T) {
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			http.Redirect(w, r, "/elsewhere/api/v2/alerts", http.StatusFound)
			return
		}
		gets.Add(1)
		_, _ = w.Write([]byte("[]"))
	}))
	t.Cleanup(srv.Close)
	cred := filepath.Join(t.TempDir(), "cred")
	if err := os.WriteFile(cred, []byte("s3cr3t"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := New(&config.Config{Alertmanager: &config.Alertmanager{URLs: []string{srv.URL}, Timeout: 5 * time.Second,
		HTTPConfig: config.HTTPClient{Authorization: &config.Authorization{Type: "Bearer", CredentialsFile: cred}}}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := o.Client.PostTo(context.Background(), 0, []Alert{{Labels: map[string]string{"alertname": "KandevStalledTurn"}}})
	if err == nil || v.Retry || gets.Load() != 0 {
		t.Errorf("a redirected POST: verdict %+v, error %v, %d GETs; want a failure for good and no GET", v, err, gets.Load())
	}
}

// slowStore answers EpisodesSentTo with an open episode once released:
// a resend that read the ledger before the episode resolved.
type slowStore struct {
	read    chan struct{}
	release chan struct{}
}

func (s slowStore) EpisodesSentTo(context.Context, model.ActionKind, time.Time) ([]model.Episode, error) {
	close(s.read)
	<-s.release
	return []model.Episode{{ID: "ep1", Kind: model.KindStalledTurn, SessionID: "s1", Since: since}}, nil
}

// TestResendBeforeEnd: a resend that read an episode open and the send of
// its end race; Alertmanager hears the firing alert first and the end
// last, never the other way round (which would fire it again).
func TestResendBeforeEnd(t *testing.T) {
	var mu sync.Mutex
	var order []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var alerts []Alert
		_ = json.NewDecoder(r.Body).Decode(&alerts)
		mu.Lock()
		defer mu.Unlock()
		for _, a := range alerts {
			order = append(order, map[bool]string{true: "end", false: "firing"}[a.EndsAt != ""])
		}
	}))
	t.Cleanup(srv.Close)
	o := &Outlet{Client: &Client{URLs: []string{srv.URL}, HTTP: http.DefaultClient, Timeout: 5 * time.Second}, Options: opts}
	st := slowStore{read: make(chan struct{}), release: make(chan struct{})}
	resent := make(chan error, 1)
	go func() { _, err := o.Resend(context.Background(), st, now); resent <- err }()
	<-st.read
	e := model.Episode{ID: "ep1", Kind: model.KindStalledTurn, SessionID: "s1", Since: since}
	body, err := json.Marshal(Alerts(e, policy.StoredFinding(e), opts, now, now))
	if err != nil {
		t.Fatal(err)
	}
	sent := make(chan notify.Sent, 1)
	go func() {
		sent <- o.Send(context.Background(), notify.Attempt{Action: model.Action{Seq: "resolve/alertmanager/", Body: string(body)}})
	}()
	time.Sleep(200 * time.Millisecond) // the end's send is under way
	close(st.release)
	if err := <-resent; err != nil {
		t.Fatal(err)
	}
	<-sent
	mu.Lock()
	defer mu.Unlock()
	if len(order) != 2 || order[0] != "firing" || order[1] != "end" {
		t.Errorf("Alertmanager heard %v, want [firing end]", order)
	}
}
