package kandevapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
)

// Responded is kandev's answer to a respond it took: claimed says whether
// this answer won; Recorded is the answer kandev holds (the winner's),
// when it says.
type Responded struct {
	Claimed  bool
	Status   string
	Recorded []model.Answer
}

// RespondError is kandev refusing a respond: its HTTP status and message.
type RespondError struct {
	Status  int
	Message string
}

func (e *RespondError) Error() string {
	return fmt.Sprintf("kandev refused the answer: %d %s", e.Status, e.Message)
}

// maxAnswerBody bounds what is read of kandev's answer: it echoes the
// answers, a few kilobytes at most.
const maxAnswerBody = 1 << 20

// Respond answers bundle pendingID with one answer per question, over
// HTTP: POST /api/v1/clarification/<pending_id>/respond. kandev takes the
// first answer of a bundle and refuses the rest.
func (c *Client) Respond(ctx context.Context, pendingID string, answers []model.Answer) (Responded, error) {
	body, err := json.Marshal(map[string]any{"answers": answers, "rejected": false, "reject_reason": ""})
	if err != nil {
		return Responded{}, err
	}
	u := c.base + "/api/v1/clarification/" + url.PathEscape(pendingID) + "/respond"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return Responded{}, fmt.Errorf("%w: %w", notify.ErrNotSent, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token.Reveal())
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Responded{}, fmt.Errorf("kandev respond: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBody))
	if err != nil {
		return Responded{}, fmt.Errorf("kandev respond: read the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error, Message string
		}
		_ = json.Unmarshal(b, &e)
		msg := strings.TrimSpace(e.Error + " " + e.Message)
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		return Responded{}, &RespondError{Status: resp.StatusCode, Message: msg}
	}
	var ok struct {
		Success  bool   `json:"success"`
		Claimed  *bool  `json:"claimed"`
		Status   string `json:"status"`
		Response *struct {
			Answers []model.Answer `json:"answers"`
		} `json:"response"`
	}
	if err := json.Unmarshal(b, &ok); err != nil {
		return Responded{}, fmt.Errorf("kandev respond: an answer that is not kandev's: %w", err)
	}
	// A kandev that does not say claimed took the answer: only the
	// winner is answered 200 there, the rest 409.
	r := Responded{Claimed: ok.Claimed == nil || *ok.Claimed, Status: ok.Status}
	if ok.Response != nil {
		r.Recorded = ok.Response.Answers
	}
	return r, nil
}
