package interact_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/interact"
)

// TestVerify: only Slack's v0 signature of this body, under this secret,
// signed within 5 minutes of now, passes.
func TestVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	body := []byte("payload=%7B%7D")
	secret := config.Secret("s3cret")
	good := interact.Sign(secret, body, now)
	with := func(f func(h http.Header)) http.Header {
		h := good.Clone()
		f(h)
		return h
	}
	cases := []struct {
		name   string
		secret config.Secret
		h      http.Header
		body   []byte
		ok     bool
	}{
		{"signed now", secret, good, body, true},
		// Signed 4 minutes ago, or by a clock 4 minutes ahead: within 5.
		{"4 minutes old", secret, interact.Sign(secret, body, now.Add(-4*time.Minute)), body, true},
		{"4 minutes ahead", secret, interact.Sign(secret, body, now.Add(4*time.Minute)), body, true},
		// A replay of a request signed 6 minutes ago.
		{"stale", secret, interact.Sign(secret, body, now.Add(-6*time.Minute)), body, false},
		{"another secret", config.Secret("other"), good, body, false},
		{"another body", secret, good, []byte("payload=%7B%22x%22%7D"), false},
		{"no signature", secret, with(func(h http.Header) { h.Del("X-Slack-Signature") }), body, false},
		{"no timestamp", secret, with(func(h http.Header) { h.Del("X-Slack-Request-Timestamp") }), body, false},
		{"another version", secret, with(func(h http.Header) { h.Set("X-Slack-Signature", "v1="+h.Get("X-Slack-Signature")[3:]) }), body, false},
		// No secret configured refuses everything, even an empty signature.
		{"no secret", "", interact.Sign("", body, now), body, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := interact.Verify(c.secret, c.h, c.body, now)
			if (err == nil) != c.ok || err != nil && !errors.Is(err, interact.ErrUnsigned) {
				t.Fatalf("Verify: %v, want ok=%v", err, c.ok)
			}
		})
	}
}

// TestParse: a watchdogd button's click and a form's submission are read;
// another app's button and a link are not watchdogd's; junk is an error.
func TestParse(t *testing.T) {
	click := `{"type":"block_actions","user":{"id":"U1"},"trigger_id":"tr","container":{"message_ts":"1.2","channel_id":"C1"},
	  "actions":[{"type":"button","block_id":"b","action_id":"watchdogd:snooze:0:0:1h","value":"{\"e\":\"ep1\",\"b\":\"snooze\",\"v\":\"1h\"}"}]}`
	ev, err := interact.Parse([]byte(click))
	if err != nil || ev.Value.Episode != "ep1" || ev.Value.Value != "1h" || ev.User != "U1" || ev.Channel != "C1" || ev.TS != "1.2" || ev.TriggerID != "tr" {
		t.Fatalf("click %+v %v", ev, err)
	}
	form := `{"type":"view_submission","user":{"id":"U2"},"view":{"callback_id":"watchdogd:answers",
	  "private_metadata":"C1\n1.2\n{\"e\":\"ep1\",\"b\":\"form\"}","state":{"values":{"t0":{"text":{"type":"plain_text_input","value":"hi"}}}}}}`
	ev, err = interact.Parse([]byte(form))
	if err != nil || ev.Form == nil || ev.Form["t0"]["text"].Value != "hi" || ev.User != "U2" || ev.TS != "1.2" {
		t.Fatalf("form %+v %v", ev, err)
	}
	for _, p := range []string{
		`{"type":"block_actions","actions":[{"type":"button","block_id":"b","action_id":"other-app","value":"x"}]}`,
		`{"type":"block_actions","actions":[{"type":"button","block_id":"b","action_id":"watchdogd:link"}]}`,
		`{"type":"view_closed"}`,
	} {
		if _, err := interact.Parse([]byte(p)); !errors.Is(err, interact.ErrNotOurs) {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if _, err := interact.Parse([]byte(`{"type":"block_actions","actions":[{"type":"button","block_id":"b","action_id":"watchdogd:x","value":"forged"}]}`)); err == nil {
		t.Fatal("a watchdogd button with a forged value was read")
	}
	if _, err := interact.Parse([]byte("not json")); err == nil {
		t.Fatal("junk was read")
	}
}
