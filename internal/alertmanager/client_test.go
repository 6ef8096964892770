package alertmanager

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
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
	v, err := o.Client.Post(context.Background(), []Alert{{Labels: map[string]string{"alertname": "KandevStalledTurn"}}})
	if err == nil || v.Retry || gets.Load() != 0 {
		t.Errorf("a redirected POST: verdict %+v, error %v, %d GETs; want a failure for good and no GET", v, err, gets.Load())
	}
}
