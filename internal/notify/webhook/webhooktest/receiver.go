// Package webhooktest is a webhook receiver for tests: it verifies each
// request with the Standard Webhooks project's own Go library, an
// implementation watchdogd's signer shares no code with, so a delivery it
// accepts is one any conforming receiver accepts. It records what arrived
// and answers as a test tells it to (429 with Retry-After, 5xx, a hang).
package webhooktest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
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
	wh *standardwebhooks.Webhook

	mu         sync.Mutex
	deliveries []Delivery
	answer     func(n int, d Delivery) Answer
}

// New starts a receiver verifying with secret ("whsec_" and base64).
func New(secret string) (*Receiver, error) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, fmt.Errorf("webhooktest: secret: %w", err)
	}
	r := &Receiver{wh: wh}
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
	d.Verified, d.Why = r.verify(d, req.Header)
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

// verify checks a request as a Standard Webhooks receiver must, through
// the library: the headers present, the timestamp within five minutes of
// now, and one of the space-separated signatures the HMAC-SHA256 of
// "<webhook-id>.<webhook-timestamp>.<body>" under the secret. The payload
// must also be declared JSON, as watchdogd's are.
func (r *Receiver) verify(d Delivery, h http.Header) (bool, string) {
	if ct := h.Get("Content-Type"); ct != "application/json" {
		return false, "content type " + ct
	}
	if err := r.wh.Verify(d.Body, h); err != nil {
		return false, err.Error()
	}
	return true, ""
}
