package interact

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/httpguard"
)

// Path is where Slack posts interactions in the HTTP mode.
const Path = "/slack/interactions"

// HTTP receives Slack's signed interaction requests.
type HTTP struct {
	Handler *Handler
	// Secret is the signing secret, read for each request (a rotated
	// Secret file takes effect without a restart).
	Secret func() config.Secret
	Now    func() time.Time
}

// Listen serves Slack's requests on addr (slack.interactivity.listen), on
// a listener of its own, until the server returned is shut down. The
// listener is reachable by whoever can reach Slack's side of it, so it
// bounds its connections as the main one does (httpguard.Guard) and every
// request its time.
func (s *HTTP) Listen(addr string) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("slack.interactivity.listen %s: %w", addr, err)
	}
	guard := httpguard.New(ln, httpguard.MaxConns, httpguard.MaxIdleConns, httpguard.MaxSilentConns)
	srv := &http.Server{Handler: s, ConnState: guard.Track, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 90 * time.Second, MaxHeaderBytes: 32 << 10}
	if srv.ErrorLog, err = zap.NewStdLogAt(s.Handler.Log, zap.WarnLevel); err != nil {
		_ = ln.Close()
		return nil, err
	}
	go func() {
		if err := srv.Serve(guard); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.Handler.Log.Error("Slack interactions listener", zap.Error(err))
		}
	}()
	s.Handler.Log.Info("receiving Slack clicks over HTTP", zap.String("listen", ln.Addr().String()), zap.String("path", Path))
	return srv, nil
}

// ServeHTTP answers 401 to a request Slack did not sign (counted as
// unauthorized), 400 to one it did but watchdogd cannot read, 500 when a
// click could not be saved (Slack retries it), and 200 otherwise, at
// once: what a click does is delivered after.
func (s *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != Path {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 2*maxPayload+1))
	if err != nil || len(body) > 2*maxPayload {
		s.Handler.count("malformed")
		http.Error(w, "request body unreadable or too large", http.StatusBadRequest)
		return
	}
	if err := Verify(s.Secret(), r.Header, body, s.Now()); err != nil {
		s.Handler.count("unauthorized")
		s.Handler.Log.Warn("refused a request to the Slack endpoint", zap.String("remote", r.RemoteAddr), zap.Error(err))
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		s.Handler.count("malformed")
		http.Error(w, "not a form", http.StatusBadRequest)
		return
	}
	ev, err := Parse([]byte(form.Get("payload")))
	switch {
	case errors.Is(err, ErrNotOurs):
		w.WriteHeader(http.StatusOK)
		return
	case err != nil:
		s.Handler.count("malformed")
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := s.Handler.Handle(r.Context(), ev); err != nil {
		http.Error(w, "not saved; send it again", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}
