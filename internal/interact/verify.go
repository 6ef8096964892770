// Package interact receives clicks on watchdogd's Slack messages, over
// Socket Mode (an outbound WebSocket: no ingress) or Slack's HTTP
// requests (POST /slack/interactions, signed), and feeds both to one
// handler: who may act is checked, the click is saved in the ledger as an
// action keyed by (episode, button, value, user) before Slack is
// acknowledged, and delivered through the delivery protocol right after.
// A click Slack sends twice (a redelivered envelope, a retried request, a
// double click) is one action.
package interact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
)

// MaxSkew is how far a signed request's timestamp may be from now: Slack
// asks receivers to refuse older ones, which a replayed request is.
const MaxSkew = 5 * time.Minute

// ErrUnsigned is why a request is refused with 401.
var ErrUnsigned = errors.New("not signed by Slack with the signing secret, or signed more than 5 minutes from now")

// Precheck is what can be told of a request's signature from its headers
// alone, before its body is read: a signing secret is configured and the
// headers pass HeadersCheck. Anyone can send a request; what is refused
// here costs none of its body.
func Precheck(secret config.Secret, h http.Header, now time.Time) error {
	if secret == "" {
		return ErrUnsigned
	}
	return HeadersCheck(h, now)
}

// HeadersCheck is what can be told of a request's signature from its
// headers without the secret: X-Slack-Request-Timestamp is within
// MaxSkew of now, and X-Slack-Signature is a v0 signature ("v0=" and 64
// hex digits). What is refused here costs neither its body nor a read of
// the secret's file.
func HeadersCheck(h http.Header, now time.Time) error {
	sec, err := strconv.ParseInt(h.Get("X-Slack-Request-Timestamp"), 10, 64)
	if err != nil {
		return ErrUnsigned
	}
	if d := now.Sub(time.Unix(sec, 0)); d > MaxSkew || d < -MaxSkew {
		return ErrUnsigned
	}
	sig := h.Get("X-Slack-Signature")
	if len(sig) != len("v0=")+2*sha256.Size || sig[:3] != "v0=" {
		return ErrUnsigned
	}
	for _, c := range sig[3:] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return ErrUnsigned
		}
	}
	return nil
}

// Verify checks Slack's signature of an HTTP request: it passes Precheck,
// and X-Slack-Signature is the hex HMAC-SHA256, under the signing secret,
// of "v0:<X-Slack-Request-Timestamp>:<body>". The compare takes constant
// time.
func Verify(secret config.Secret, h http.Header, body []byte, now time.Time) error {
	if err := Precheck(secret, h, now); err != nil {
		return err
	}
	mac := hmac.New(sha256.New, []byte(secret.Reveal()))
	mac.Write([]byte("v0:" + h.Get("X-Slack-Request-Timestamp") + ":"))
	mac.Write(body)
	want := "v0=" + hex.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(want), []byte(h.Get("X-Slack-Signature"))) {
		return ErrUnsigned
	}
	return nil
}

// Sign is the signature headers Slack would send for body at now: for
// tests and the stand-ins that play Slack.
func Sign(secret config.Secret, body []byte, now time.Time) http.Header {
	ts := strconv.FormatInt(now.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret.Reveal()))
	mac.Write([]byte("v0:" + ts + ":"))
	mac.Write(body)
	h := http.Header{}
	h.Set("X-Slack-Request-Timestamp", ts)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	return h
}
