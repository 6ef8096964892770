package webhook

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// TestSignReferenceVector: the Standard Webhooks specification's own test
// vector, so that receivers' libraries verify what watchdogd signs.
func TestSignReferenceVector(t *testing.T) {
	k, err := ParseSecret(config.Secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
	if err != nil {
		t.Fatal(err)
	}
	got := Sign(k, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}

// TestParseSecret: only whsec_ and base64 is a secret; the error never
// repeats it.
func TestParseSecret(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", true},
		{"  whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n", true}, // a file's newline
		{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", false},          // no prefix
		{"whsec_not base64!", false},
		{"whsec_", false},
	} {
		_, err := ParseSecret(config.Secret(c.in))
		if (err == nil) != c.ok {
			t.Errorf("ParseSecret(%q): %v", c.in, err)
		}
		if err != nil && len(c.in) > 8 && strings.Contains(err.Error(), c.in[6:]) {
			t.Errorf("the error repeats the secret: %v", err)
		}
	}
}

// TestClassify: what a receiver's answer means.
func TestClassify(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name       string
		status     int
		retryAfter string
		want       notify.Verdict
	}{
		{"accepted", 200, "", notify.Verdict{}},
		{"accepted, no content", 204, "", notify.Verdict{}},
		{"rate limited, wait given in seconds", 429, "30", notify.Verdict{Retry: true, RateLimited: true, After: 30 * time.Second, Code: "429"}},
		{"rate limited, wait given as a date", 429, "Thu, 03 Dec 2026 12:02:00 GMT", notify.Verdict{Retry: true, RateLimited: true, After: 2 * time.Minute, Code: "429"}},
		{"rate limited without a wait: backoff", 429, "", notify.Verdict{Retry: true, RateLimited: true, Code: "429"}},
		{"a server error may have been processed", 502, "", notify.Verdict{Retry: true, Uncertain: true, Code: "502"}},
		{"unavailable for a while", 503, "120", notify.Verdict{Retry: true, Uncertain: true, After: 2 * time.Minute, Code: "503"}},
		{"a wait over an hour is an hour", 503, "86400", notify.Verdict{Retry: true, Uncertain: true, After: time.Hour, Code: "503"}},
		{"refused: fails for good", 400, "", notify.Verdict{Code: "400"}},
		{"not authorised: fails for good", 401, "", notify.Verdict{Code: "401"}},
		{"gone: fails for good, and closes the webhook", 410, "", notify.Verdict{Gone: true, Code: "410"}},
		{"a redirect not followed: fails for good", 308, "", notify.Verdict{Code: "308"}},
	}
	for _, c := range cases {
		if got := Classify(c.status, c.retryAfter, now); got != c.want {
			t.Errorf("%s: Classify(%d, %q) = %+v, want %+v", c.name, c.status, c.retryAfter, got, c.want)
		}
	}
}

// TestBody: a step's payload and a resolve's.
func TestBody(t *testing.T) {
	since := time.Date(2026, 12, 3, 11, 0, 0, 0, time.UTC)
	e := model.Episode{ID: "ep-1", Kind: model.KindStalledTurn, Since: since}
	f := scan.Finding{Kind: model.KindStalledTurn, SessionID: "s1", TaskID: "t1"}
	step := model.Action{Key: "k1", Seq: "step/stalled_turn/1/0", Step: 1, Kind: model.ActionWebhook, Channel: "ops"}
	b, err := Body(notify.Rendering{Action: step, Episode: e, Finding: f})
	if err != nil {
		t.Fatal(err)
	}
	var p Payload
	if err := json.Unmarshal([]byte(b), &p); err != nil {
		t.Fatal(err)
	}
	want := Payload{SchemaVersion: 1, Event: "step", Key: "k1", Finding: f,
		Episode: Episode{ID: "ep-1", Kind: model.KindStalledTurn, State: "open", Since: "2026-12-03T11:00:00Z", Step: 2}}
	if p.Event != want.Event || p.Key != want.Key || p.Episode != want.Episode || p.SchemaVersion != 1 || p.Finding.SessionID != "s1" {
		t.Errorf("step payload %+v, want %+v", p, want)
	}
	resolve := model.Action{Key: "k2", Seq: "resolve/webhook/ops", Kind: model.ActionWebhook, Channel: "ops"}
	b, err = Body(notify.Rendering{Action: resolve, Episode: e, Finding: f, Reason: "the turn completed"})
	if err != nil {
		t.Fatal(err)
	}
	p = Payload{}
	if err := json.Unmarshal([]byte(b), &p); err != nil {
		t.Fatal(err)
	}
	if p.Event != "resolved" || p.Episode.State != "resolved" || p.Episode.Step != 0 || p.Episode.Resolution != "the turn completed" || p.Key != "k2" {
		t.Errorf("resolve payload %+v", p)
	}
}

// TestSequence: an episode's payloads to one webhook say their order:
// each later step of the ladder, and each repeat of its last step, higher;
// the resolve higher than every step to that webhook the decision sees
// (not another webhook's, not another outlet's); decided_at is the
// decision's instant.
func TestSequence(t *testing.T) {
	decided := time.Date(2026, 12, 3, 12, 0, 0, 123456000, time.UTC)
	step := func(i, r int, channel string, kind model.ActionKind) model.Action {
		return model.Action{Seq: "step/stalled_turn/x", Step: i, Repeat: r, Kind: kind, Channel: channel}
	}
	var prev int
	for _, a := range []model.Action{step(0, 0, "ops", model.ActionWebhook), step(1, 0, "ops", model.ActionWebhook), step(2, 0, "ops", model.ActionWebhook),
		step(2, 1, "ops", model.ActionWebhook), step(2, 7, "ops", model.ActionWebhook)} {
		if s := Sequence(a); s <= prev {
			t.Errorf("step %d repeat %d: sequence %d after %d", a.Step, a.Repeat, s, prev)
		} else {
			prev = s
		}
	}
	e := model.Episode{ID: "ep-1", Kind: model.KindStalledTurn, Actions: []model.Action{
		step(0, 0, "ops", model.ActionWebhook), step(2, 3, "ops", model.ActionWebhook), // sequence 6
		step(2, 9, "audit", model.ActionWebhook), step(2, 9, "C1", model.ActionSlack),
		{Seq: "resolve/webhook/audit", Kind: model.ActionWebhook, Channel: "ops"},
	}}
	resolve := model.Action{Key: "k2", Seq: "resolve/webhook/ops", Kind: model.ActionWebhook, Channel: "ops"}
	b, err := Body(notify.Rendering{Action: resolve, Episode: e, Now: decided})
	if err != nil {
		t.Fatal(err)
	}
	var p Payload
	if err := json.Unmarshal([]byte(b), &p); err != nil {
		t.Fatal(err)
	}
	if p.Sequence != 7 || p.DecidedAt != "2026-12-03T12:00:00.123456Z" {
		t.Errorf("resolve: sequence %d decided_at %q, want 7 (after ops' step at 6) and the decision's instant", p.Sequence, p.DecidedAt)
	}
	b, _ = Body(notify.Rendering{Action: step(1, 0, "ops", model.ActionWebhook), Episode: e, Now: decided})
	if p = (Payload{}); json.Unmarshal([]byte(b), &p) != nil || p.Sequence != 2 || p.DecidedAt == "" {
		t.Errorf("step 2: %+v", p)
	}
}
