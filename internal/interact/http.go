package interact

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/httpguard"
)

// Path is where Slack posts interactions in the HTTP mode.
const Path = "/slack/interactions"

// The HTTP mode's bounds. Its listener faces whoever reaches Slack's side
// of it, and a request cannot be told from Slack's before its body is
// read and its signature checked: what anyone can make the endpoint hold
// is bounded here. Slack sends a request in one go and gives up on it
// after 3 seconds.
const (
	// MaxReading is the most bodies read at once (MaxBody each). Past it a
	// request waits its turn, and one that gets none within ReadWithin
	// is answered 503 (watchdogd_slack_requests_shed_total).
	MaxReading = 16
	// ReadWithin is how long a request has, from its headers, to get a
	// turn and send its body: Slack waits no longer for the answer.
	ReadWithin = 3 * time.Second
	// SlowAfter is how long a body may take to arrive while others wait
	// their turn; then it is cut off and answered 503. With every
	// connection (MaxConns) waiting, a request's turn comes within
	// MaxConns × SlowAfter / MaxReading: 1.6 s.
	SlowAfter = 100 * time.Millisecond
	// MaxConns, MaxIdleConns and MaxSilentConns bound the listener's
	// connections (httpguard.Guard): Slack opens a few.
	MaxConns       = 256
	MaxIdleConns   = 16
	MaxSilentConns = MaxConns
	// maxHeaderBytes bounds a request's headers: Slack's are about 1 KiB.
	maxHeaderBytes = 8 << 10
)

// HTTP receives Slack's signed interaction requests.
type HTTP struct {
	Handler *Handler
	// Secret is the signing secret, read for each request whose headers
	// pass HeadersCheck (a rotated secret file takes effect without a
	// restart; an unsigned flood reads nothing).
	Secret func() config.Secret
	Now    func() time.Time
	// Shed hears each request answered 503 unread.
	Shed func()
	// MaxReading, ReadWithin and SlowAfter replace the package's bounds
	// of the same names when set (tests set them small).
	MaxReading            int
	ReadWithin, SlowAfter time.Duration

	once    sync.Once
	gate    *gate
	refused quiet
}

// Listen serves Slack's requests on addr (slack.interactivity.listen), on
// a listener of its own, until the server returned is shut down. The
// listener is reachable by whoever can reach Slack's side of it, so it
// bounds its connections (MaxConns, httpguard.Guard) and every request
// its time.
func (s *HTTP) Listen(addr string) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("slack.interactivity.listen %s: %w", addr, err)
	}
	guard := httpguard.New(ln, MaxConns, MaxIdleConns, MaxSilentConns)
	srv := &http.Server{Handler: s, ConnState: guard.Track, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 90 * time.Second, MaxHeaderBytes: maxHeaderBytes}
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

// unreadableInteraction is the whole answer to a signed request whose
// interaction watchdogd cannot read.
const unreadableInteraction = "watchdogd cannot read this interaction"

// ServeHTTP answers 401 to a request Slack did not sign (counted as
// unauthorized), refusing what its headers show before reading its body;
// 413 to a body larger than MaxBody, 408 to one slower than ReadWithin
// and 400 to one Slack signed but watchdogd cannot read (counted as
// malformed); 503 to one with no turn to be read (shed); 500 when a
// click could not be saved (Slack retries it); and 200 otherwise, at
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
	s.once.Do(s.init)
	rc := http.NewResponseController(w)
	deadline := time.Now().Add(s.ReadWithin)
	_ = rc.SetReadDeadline(deadline)
	now := s.Now()
	if err := HeadersCheck(r.Header, now); err != nil { // before the secret: its file is read per request
		s.unauthorized(w, rc, r, err)
		return
	}
	secret := s.Secret()
	if err := Precheck(secret, r.Header, now); err != nil {
		s.unauthorized(w, rc, r, err)
		return
	}
	if r.ContentLength > MaxBody {
		s.malformed(w, rc, http.StatusRequestEntityTooLarge, unreadable[http.StatusRequestEntityTooLarge])
		return
	}
	form, code := s.read(rc, r, secret, deadline)
	switch code {
	case 0:
		s.handle(w, r, form)
	case http.StatusServiceUnavailable:
		s.shed(w, rc)
	case http.StatusUnauthorized:
		s.unauthorized(w, rc, r, ErrUnsigned)
	default:
		s.malformed(w, rc, code, unreadable[code])
	}
}

// unreadable are the answers to a body read but not taken.
var unreadable = map[int]string{
	http.StatusRequestEntityTooLarge: fmt.Sprintf("a body of more than %d bytes", MaxBody),
	http.StatusRequestTimeout:        fmt.Sprintf("the body did not come within %s", ReadWithin),
	http.StatusBadRequest:            "an unreadable body, or not a form",
}

// read reads the body in a turn of the gate's, checks its signature and
// reads it as a form: 0 and the form, or the answer's status for a body
// that had no turn or was cut off (503), was too large (413), too slow
// (408), not signed (401), unreadable or not a form (400).
func (s *HTTP) read(rc *http.ResponseController, r *http.Request, secret config.Secret, deadline time.Time) (url.Values, int) {
	sl, ok := s.gate.take(deadline, func() { _ = rc.SetReadDeadline(time.Now()) })
	if !ok {
		return nil, http.StatusServiceUnavailable
	}
	defer s.gate.give(sl)
	n, err := io.ReadFull(r.Body, sl.buf)
	switch {
	case err == nil:
		return nil, http.StatusRequestEntityTooLarge
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
	case s.gate.wasCut(sl):
		return nil, http.StatusServiceUnavailable
	case isTimeout(err):
		return nil, http.StatusRequestTimeout
	default:
		return nil, http.StatusBadRequest
	}
	body := sl.buf[:n]
	if Verify(secret, r.Header, body, s.Now()) != nil {
		return nil, http.StatusUnauthorized
	}
	form, err := url.ParseQuery(string(body)) // a copy: the buffer goes back to the gate
	if err != nil {
		return nil, http.StatusBadRequest
	}
	return form, 0
}

// handle handles a signed form: Slack's payload.
func (s *HTTP) handle(w http.ResponseWriter, r *http.Request, form url.Values) {
	ev, err := Parse([]byte(form.Get("payload")))
	switch {
	case errors.Is(err, ErrNotOurs):
		w.WriteHeader(http.StatusOK)
		return
	case err != nil:
		// The reason is logged, not sent: a parser's error quotes what it
		// was given and names watchdogd's insides.
		s.Handler.count("malformed")
		s.Handler.Log.Warn("a signed interaction from Slack watchdogd cannot read", zap.String("remote", r.RemoteAddr), zap.Error(err))
		http.Error(w, unreadableInteraction, http.StatusBadRequest)
		return
	}
	reply, err := s.Handler.Handle(r.Context(), ev)
	if err != nil {
		http.Error(w, "not saved; send it again", http.StatusInternalServerError)
		return
	}
	if reply != nil {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(reply)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (s *HTTP) init() {
	if s.MaxReading <= 0 {
		s.MaxReading = MaxReading
	}
	if s.ReadWithin <= 0 {
		s.ReadWithin = ReadWithin
	}
	if s.SlowAfter <= 0 {
		s.SlowAfter = SlowAfter
	}
	s.gate = newGate(s.MaxReading, s.SlowAfter)
}

func (s *HTTP) unauthorized(w http.ResponseWriter, rc *http.ResponseController, r *http.Request, err error) {
	s.Handler.count("unauthorized")
	s.refused.log(s.Handler.Log, "refused a request to the Slack endpoint", zap.String("remote", r.RemoteAddr), zap.Error(err))
	refuse(w, rc, http.StatusUnauthorized, err.Error())
}

func (s *HTTP) malformed(w http.ResponseWriter, rc *http.ResponseController, code int, text string) {
	s.Handler.count("malformed")
	refuse(w, rc, code, text)
}

func (s *HTTP) shed(w http.ResponseWriter, rc *http.ResponseController) {
	if s.Shed != nil {
		s.Shed()
	}
	refuse(w, rc, http.StatusServiceUnavailable, "too many requests at once; send it again")
}

// refuse answers code and closes the connection, reading nothing more of
// the request (its read deadline passed): what is left of a body is never
// read, nor taken for a next request.
func refuse(w http.ResponseWriter, rc *http.ResponseController, code int, text string) {
	_ = rc.SetReadDeadline(time.Now())
	w.Header().Set("Connection", "close")
	http.Error(w, text, code)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// quiet logs the first of a kind of line, then at most one each
// quietFor, saying how many it left out: a flood of refused requests is
// a flood of one line.
type quiet struct {
	mu   sync.Mutex
	last time.Time
	left int
}

const quietFor = 10 * time.Second

func (q *quiet) log(l *zap.Logger, msg string, fields ...zap.Field) {
	q.mu.Lock()
	now := time.Now()
	if !q.last.IsZero() && now.Sub(q.last) < quietFor {
		q.left++
		q.mu.Unlock()
		return
	}
	left := q.left
	q.last, q.left = now, 0
	q.mu.Unlock()
	if left > 0 {
		fields = append(fields, zap.Int("more_not_logged", left))
	}
	l.Warn(msg, fields...)
}
