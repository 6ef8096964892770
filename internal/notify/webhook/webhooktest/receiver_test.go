package webhooktest

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// TestReceiverVerifies: the receiver accepts what a Standard Webhooks
// sender signs with the secret and refuses, 401 and with the reason,
// every way a request can fall short of it.
func TestReceiverVerifies(t *testing.T) {
	signer, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	other, err := standardwebhooks.NewWebhook("whsec_" + "b3RoZXIgc2VjcmV0IGtleSBieXRlcw==")
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"event":"step","key":"ep-1/0/0"}`)
	sign := func(wh *standardwebhooks.Webhook, at time.Time, b []byte) string {
		s, err := wh.Sign("ep-1/0/0", at, b)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	now := time.Now()
	for _, c := range []struct {
		name        string
		ts, sig, ct string
		body        []byte
		ok          bool
		why         string
	}{
		{name: "signed with the secret", ts: unix(now), sig: sign(signer, now, body), ok: true},
		{name: "one of several signatures matches", ts: unix(now), sig: sign(other, now, body) + " " + sign(signer, now, body), ok: true},
		{name: "signed with another secret", ts: unix(now), sig: sign(other, now, body), why: "no matching signature"},
		{name: "body changed after signing", ts: unix(now), sig: sign(signer, now, body), body: []byte(`{"event":"resolved","key":"ep-1/0/0"}`), why: "no matching signature"},
		{name: "timestamp changed after signing", ts: unix(now.Add(time.Second)), sig: sign(signer, now, body), why: "no matching signature"},
		{name: "six minutes old", ts: unix(now.Add(-6 * time.Minute)), sig: sign(signer, now.Add(-6*time.Minute), body), why: "too old"},
		{name: "six minutes ahead", ts: unix(now.Add(6 * time.Minute)), sig: sign(signer, now.Add(6*time.Minute), body), why: "too new"},
		{name: "no signature", ts: unix(now), why: "missing required headers"},
		{name: "not JSON", ts: unix(now), sig: sign(signer, now, body), ct: "text/plain", why: "content type text/plain"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Start(t, secret)
			b := body
			if c.body != nil {
				b = c.body
			}
			req, err := http.NewRequest(http.MethodPost, r.URL, bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			if c.ct != "" {
				req.Header.Set("Content-Type", c.ct)
			}
			req.Header.Set("webhook-id", "ep-1/0/0")
			req.Header.Set("webhook-timestamp", c.ts)
			if c.sig != "" {
				req.Header.Set("webhook-signature", c.sig)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			d := r.Deliveries()
			if len(d) != 1 {
				t.Fatalf("%d deliveries recorded", len(d))
			}
			want := http.StatusOK
			if !c.ok {
				want = http.StatusUnauthorized
			}
			if d[0].Verified != c.ok || resp.StatusCode != want || !strings.Contains(d[0].Why, c.why) {
				t.Errorf("verified %v (%q), answered %d; want verified %v (%q), %d", d[0].Verified, d[0].Why, resp.StatusCode, c.ok, c.why, want)
			}
		})
	}
}

// TestReceiverRefusesBadSecret: a secret that is not base64 is refused at
// start, not read as an empty key that nothing verifies against.
func TestReceiverRefusesBadSecret(t *testing.T) {
	if _, err := New("whsec_not base64!"); err == nil {
		t.Fatal("a secret that is not base64 was taken")
	}
}

func unix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
