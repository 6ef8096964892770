// Package webhook is watchdogd's webhook outlet: each step and each resolve
// of an episode is POSTed as JSON to a configured URL, signed as Standard
// Webhooks sign (webhook-id, webhook-timestamp, webhook-signature), with
// the action's key as webhook-id and Idempotency-Key.
//
// A webhook is at-least-once: a delivery cut short by a crash or a timeout
// may have been received, and is sent again with the same key, which the
// receiver deduplicates on. (Slack is exactly-once because watchdogd can
// look for an earlier post there; a webhook offers nothing to look in.)
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// SchemaVersion is the payload's schema_version: it grows only when a
// receiver would have to change.
const SchemaVersion = 1

// Payload is what a webhook receives.
type Payload struct {
	SchemaVersion int    `json:"schema_version"`
	Event         string `json:"event"` // "step" or "resolved"
	Key           string `json:"key"`
	// DecidedAt is when watchdogd decided this step or resolve, whenever
	// it is delivered (a retry, a redelivery after a crash).
	DecidedAt string `json:"decided_at"`
	// Sequence orders one episode's payloads to one webhook: each step's
	// is higher than the earlier steps', the resolve's higher than every
	// step's. Deliveries can arrive out of order (a step cut short is sent
	// again with its key, maybe after the resolve went); a receiver that
	// orders by sequence never takes a late step for a reopening.
	Sequence int     `json:"sequence"`
	Episode  Episode `json:"episode"`
	// Finding is the episode's finding as `watchdogd scan` reports it: as
	// this cycle saw it for a step, as it was last seen for a resolve.
	Finding scan.Finding `json:"finding"`
}

// Episode is the episode a payload is about.
type Episode struct {
	ID    string     `json:"id"`
	Kind  model.Kind `json:"kind"`
	State string     `json:"state"` // "open" or "resolved"
	Since string     `json:"since"`
	// Step is the ladder step, from 1; absent for a resolve.
	Step int `json:"step,omitempty"`
	// Resolution says how it cleared; only for a resolve.
	Resolution string `json:"resolution,omitempty"`
}

// Body renders an action's payload: a step's, or (for a resolve) the
// episode's end.
func Body(r notify.Rendering) (string, error) {
	a, e := r.Action, r.Episode
	p := Payload{SchemaVersion: SchemaVersion, Event: "step", Key: a.Key, Finding: r.Finding, DecidedAt: r.Now.UTC().Format(time.RFC3339Nano),
		Sequence: Sequence(a), Episode: Episode{ID: e.ID, Kind: e.Kind, State: "open", Since: e.Since.UTC().Format(time.RFC3339Nano), Step: a.Step + 1}}
	if notify.Resolving(a) {
		p.Event, p.Episode.State, p.Episode.Step, p.Episode.Resolution = "resolved", "resolved", 0, r.Reason
		p.Sequence = ResolveSequence(a, e)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("encode webhook payload: %w", err)
	}
	return string(b), nil
}

// Sequence is a step's place among its episode's steps to one webhook:
// under one ladder the step due at a destination only moves on (a later
// step, or the next repeat of the last), so step i's repeat r comes at
// i+r+1, and a later decision always has a higher one.
func Sequence(a model.Action) int { return a.Step + a.Repeat + 1 }

// ResolveSequence is a resolve's: one more than the highest of the
// episode's steps to its webhook, as the decision sees them (the ledger
// loads the newest step to each destination, and every one still owed).
func ResolveSequence(a model.Action, e model.Episode) int {
	top := 0
	for _, s := range e.Actions {
		if s.Kind == a.Kind && s.Channel == a.Channel && strings.HasPrefix(s.Seq, "step/") {
			top = max(top, Sequence(s))
		}
	}
	return top + 1
}

// Key is a Standard Webhooks signing key.
type Key []byte

// ParseSecret reads a Standard Webhooks secret: whsec_ and the key in
// base64.
func ParseSecret(s config.Secret) (Key, error) {
	raw, ok := strings.CutPrefix(strings.TrimSpace(s.Reveal()), "whsec_")
	if !ok {
		return nil, errors.New("not a Standard Webhooks secret (whsec_ and the key in base64)")
	}
	k, err := base64.StdEncoding.DecodeString(raw)
	if err != nil || len(k) == 0 {
		return nil, errors.New("not a Standard Webhooks secret: what follows whsec_ is not base64")
	}
	return Key(k), nil
}

// Sign is the webhook-signature header of a message: "v1," and the
// base64 HMAC-SHA256 of "id.timestamp.body" under the key.
func Sign(k Key, id string, at time.Time, body []byte) string {
	mac := hmac.New(sha256.New, k)
	mac.Write([]byte(id + "." + strconv.FormatInt(at.Unix(), 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
