// Package webhooktest is a webhook receiver for tests: it verifies each
// request the way a Standard Webhooks library does (its own code, not
// watchdogd's signer), records what arrived, and answers as a test tells
// it to (429 with Retry-After, 5xx, a hang).
package webhooktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Delivery is one request that arrived.
type Delivery struct {
	ID, Timestamp, Signature, IdempotencyKey string
	Body                                     []byte
	// Verified: the signature is one of the key's over id.timestamp.body,
	// and the timestamp within five minutes of the receiver's clock.
	Verified bool
	// Why says why it was not verified.
	Why string
	// Status is what the receiver answered.
	Status int
	At     time.Time
}

// Event is the payload's event ("step" or "resolved") and key.
func (d Delivery) Event() (event, key string) {
	var p struct{ Event, Key string }
	_ = json.Unmarshal(d.Body, &p)
	return p.Event, p.Key
}

// Answer is what the receiver answers one request with.
type Answer struct {
	Status     int
	RetryAfter string
	// Hang holds the request until the client gives up.
	Hang bool
	// Delay holds the answer this long (or until the client gives up):
	// a window in which a test can kill the sender mid-delivery.
	Delay time.Duration
}

// Receiver is a webhook receiver on a loopback HTTP server.
type Receiver struct {
	*httptest.Server
	key []byte

	mu         sync.Mutex
	deliveries []Delivery
	answer     func(n int, d Delivery) Answer
}

// New starts a receiver verifying with secret ("whsec_" and base64).
func New(secret string) (*Receiver, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return nil, fmt.Errorf("webhooktest: secret: %w", err)
	}
	r := &Receiver{key: key}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	return r, nil
}

// Start is New for a test: a bad secret fails it, and the receiver
// closes when it ends.
func Start(t testing.TB, secret string) *Receiver {
	t.Helper()
	r, err := New(secret)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// Answer sets how the receiver answers the nth request (from 1) and the
// request itself; nil answers 200.
func (r *Receiver) Answer(f func(n int, d Delivery) Answer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answer = f
}

// Deliveries returns every request so far.
func (r *Receiver) Deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.deliveries...)
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	d := Delivery{ID: req.Header.Get("webhook-id"), Timestamp: req.Header.Get("webhook-timestamp"),
		Signature: req.Header.Get("webhook-signature"), IdempotencyKey: req.Header.Get("Idempotency-Key"), Body: body, At: time.Now()}
	d.Verified, d.Why = r.verify(d, req.Header.Get("Content-Type"))
	r.mu.Lock()
	n := len(r.deliveries) + 1
	a := Answer{Status: http.StatusOK}
	if r.answer != nil {
		a = r.answer(n, d)
	}
	if !d.Verified {
		a = Answer{Status: http.StatusUnauthorized}
	}
	d.Status = a.Status
	if a.Hang {
		d.Status = 0
	}
	r.deliveries = append(r.deliveries, d)
	r.mu.Unlock()
	if a.Hang {
		<-req.Context().Done()
		return
	}
	if a.Delay > 0 {
		select {
		case <-time.After(a.Delay):
		case <-req.Context().Done():
			return
		}
	}
	if a.RetryAfter != "" {
		w.Header().Set("Retry-After", a.RetryAfter)
	}
	w.WriteHeader(a.Status)
}

// verify checks a request as the Standard Webhooks convention says a
// receiver must: the signature header holds space-separated "v1,<base64>"
// signatures, one of which must be the HMAC-SHA256 of
// "<webhook-id>.<webhook-timestamp>.<body>"; the timestamp is within five
// minutes.
func (r *Receiver) verify(d Delivery, contentType string) (bool, string) {
	if d.ID == "" || d.Timestamp == "" || d.Signature == "" {
		return false, "missing webhook-id, webhook-timestamp or webhook-signature"
	}
	if contentType != "application/json" {
		return false, "content type " + contentType
	}
	ts, err := strconv.ParseInt(d.Timestamp, 10, 64)
	if err != nil {
		return false, "timestamp is not a number"
	}
	if skew := time.Since(time.Unix(ts, 0)); skew > 5*time.Minute || skew < -5*time.Minute {
		return false, "timestamp too far from now"
	}
	mac := hmac.New(sha256.New, r.key)
	fmt.Fprintf(mac, "%s.%s.", d.ID, d.Timestamp)
	mac.Write(d.Body)
	want := mac.Sum(nil)
	for _, sig := range strings.Fields(d.Signature) {
		version, value, ok := strings.Cut(sig, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(value)
		if err == nil && hmac.Equal(got, want) {
			return true, ""
		}
	}
	return false, "no signature matches"
}
