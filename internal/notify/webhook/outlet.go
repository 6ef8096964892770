package webhook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/term"
)

// Outlet delivers webhook actions, each to the webhook its channel names.
// Register it for model.ActionWebhook: paced (silences and quiet hours hold
// its steps; a 429's Retry-After closes the webhook), fenced, and its own
// resolve.
type Outlet struct {
	Hooks  map[string]config.Webhook
	Client *http.Client
	// ReadFile reads a webhook's secret file, at every send: a rotated
	// secret takes effect at once.
	ReadFile func(string) ([]byte, error)
}

// New is the outlet for the configured webhooks.
func New(hooks []config.Webhook) *Outlet {
	// A receiver's redirect is not followed: the payload and its signature
	// go where the config says, and a 3xx fails the action, saying so.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	o := &Outlet{Hooks: map[string]config.Webhook{}, Client: client, ReadFile: os.ReadFile}
	for _, h := range hooks {
		o.Hooks[h.Name] = h
	}
	return o
}

// Check reads every webhook's secret: the daemon refuses to start (or to
// reload) on one it could not sign with, rather than retry each step
// forever.
func (o *Outlet) Check() error {
	var errs []error
	for _, h := range o.Hooks {
		if _, err := o.key(h); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// key reads a webhook's signing key from its secret file.
func (o *Outlet) key(h config.Webhook) (Key, error) {
	b, err := o.ReadFile(h.SecretFile)
	if err != nil {
		return nil, fmt.Errorf("webhooks %s: secret_file: %w", h.Name, err)
	}
	k, err := ParseSecret(config.Secret(b))
	if err != nil {
		return nil, fmt.Errorf("webhooks %s: secret_file %s: %w", h.Name, h.SecretFile, err)
	}
	return k, nil
}

// Render freezes the payload.
func (o *Outlet) Render(r notify.Rendering) (string, error) { return Body(r) }

// Preview says where the payload goes, and what it says, for a terminal.
func (o *Outlet) Preview(a model.Action, _ model.Episode, _ string) (string, error) {
	event := "step"
	if notify.Resolving(a) {
		event = "resolved"
	}
	return fmt.Sprintf("→ webhook %s (%s, key %s):\n%s", term.Escape(a.Channel), event, term.Escape(a.Key),
		term.Indent(term.EscapeLines(a.Body))), nil
}

// maxAnswer is how much of a receiver's answer is read: enough for an
// error's gist in a log line.
const maxAnswer = 4 << 10

// Send posts the frozen payload, signed, with the action's key.
func (o *Outlet) Send(ctx context.Context, at notify.Attempt) notify.Sent {
	a := at.Action
	h, ok := o.Hooks[a.Channel]
	if !ok {
		return notify.Failed(fmt.Sprintf("webhook %q is not configured any more", a.Channel))
	}
	key, err := o.key(h)
	if err != nil {
		// Nothing left: an operator fixes the file, and the action is
		// retried as any that failed before a request.
		return notify.Error(err, notify.Verdict{Retry: true, Code: "secret"})
	}
	ctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	body := []byte(a.Body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return notify.Failed(fmt.Sprintf("webhook %s: %v", a.Channel, err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "watchdogd")
	req.Header.Set("Idempotency-Key", a.Key)
	req.Header.Set("webhook-id", a.Key)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(at.Now.Unix(), 10))
	req.Header.Set("webhook-signature", Sign(key, a.Key, at.Now, body))
	resp, err := o.Client.Do(req)
	if err != nil {
		// Not the URL: a receiver's URL may carry a token in its path or
		// query, and this error goes to the log and the ledger.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = fmt.Errorf("%s: %w", ue.Op, ue.Err)
		}
		return notify.Error(fmt.Errorf("webhook %s: %w", a.Channel, err), notify.Transport(err))
	}
	defer func() { _ = resp.Body.Close() }()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	v := Classify(resp.StatusCode, resp.Header.Get("Retry-After"), at.Now)
	if !v.Retry && v.Code == "" {
		return notify.Delivered(a.Channel, "")
	}
	return notify.Error(fmt.Errorf("webhook %s: %s: %s", a.Channel, resp.Status, term.OneLine(fmt.Errorf("%s", answer))), v)
}

// Classify is the verdict on a receiver's answer: 2xx delivered (zero
// verdict); 429 and 5xx retried, after Retry-After when the receiver says
// (a 5xx may have been processed: the next attempt carries the same key);
// any other status fails for good, a 410 Gone closing the webhook too.
func Classify(status int, retryAfter string, now time.Time) notify.Verdict {
	code := strconv.Itoa(status)
	switch {
	case status >= 200 && status < 300:
		return notify.Verdict{}
	case status == http.StatusTooManyRequests:
		return notify.Verdict{Retry: true, RateLimited: true, After: RetryAfter(retryAfter, now), Code: code}
	case status >= 500:
		return notify.Verdict{Retry: true, Uncertain: true, After: RetryAfter(retryAfter, now), Code: code}
	case status == http.StatusGone:
		return notify.Verdict{Gone: true, Code: code}
	}
	return notify.Verdict{Code: code}
}

// Destination names where action a goes, for the ledger's holds: its
// webhook (DestinationKey), "" when none is configured by that name.
func (o *Outlet) Destination(a model.Action) string {
	h, ok := o.Hooks[a.Channel]
	if !ok {
		return ""
	}
	return DestinationKey(h)
}

// DestinationKey is a webhook's key in the ledger's holds: its name and a
// hash of its URL, never the URL (it may hold a token). A 410 Gone closes
// the webhook at that URL; the same name at another URL is another
// destination, open.
func DestinationKey(h config.Webhook) string {
	sum := sha256.Sum256([]byte(h.URL))
	return h.Name + "#" + hex.EncodeToString(sum[:8])
}

// RetryAfter reads a Retry-After header: seconds, or an HTTP date; zero
// when absent or unreadable. A wait over an hour is taken as an hour.
func RetryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.Atoi(h); err == nil && s >= 0 {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = t.Sub(now)
	}
	return max(0, min(d, time.Hour))
}
