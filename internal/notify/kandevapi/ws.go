// Package kandevapi is kandev's API as watchdogd calls it, the one client
// of kandev's write side: the WebSocket at <base>/ws (message.add,
// agent.cancel, permission.respond) and the HTTP route that answers a
// question bundle, kandev's error answers, and the delivery protocol's
// verdict on each (Classify). Every outlet that acts in kandev goes
// through one Client built for kandev.base_url and its token. kandev's
// database is read elsewhere (internal/kandev), never through this API.
package kandevapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/watchdogd/watchdogd/internal/config"
)

// Client is kandev's write side as watchdogd uses it: the WebSocket API at
// <base>/ws (kandev has no HTTP route that sends a message into a session)
// and, for answers, the HTTP API under <base>/api/v1.
type Client struct {
	wsURL   string
	base    string
	token   config.Secret
	timeout time.Duration
	http    *http.Client
}

// NewClient builds a client for kandev at baseURL (http or https).
func NewClient(baseURL string, token config.Secret, timeout time.Duration) (*Client, error) {
	base := strings.TrimRight(baseURL, "/")
	u, err := url.Parse(base + "/ws")
	if err != nil {
		return nil, fmt.Errorf("kandev.base_url: %w", err)
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return nil, fmt.Errorf("kandev.base_url %q: want http or https", baseURL)
	}
	return &Client{wsURL: u.String(), base: base, token: token, timeout: timeout, http: &http.Client{Timeout: timeout}}, nil
}

// RequestError is kandev's error answer to a request.
type RequestError struct {
	Action  string
	Code    string
	Message string
}

func (e *RequestError) Error() string {
	return fmt.Sprintf("kandev refused %s: %s (%s)", e.Action, e.Message, e.Code)
}

// DialError is a failure to open the WebSocket. The request is written
// only after the connection is up, so nothing reached kandev: a retry need
// not wonder whether the action landed.
type DialError struct {
	URL string
	Err error
}

func (e *DialError) Error() string { return fmt.Sprintf("connect to kandev %s: %v", e.URL, e.Err) }

func (e *DialError) Unwrap() error { return e.Err }

// Retryable reports whether kandev's refusal is transient (INTERNAL_ERROR,
// UNAVAILABLE) rather than a decision (VALIDATION_ERROR: a RUNNING or ended
// session; NOT_FOUND, FORBIDDEN, UNAUTHORIZED). One INTERNAL_ERROR is not
// transient: agent.cancel on a session kandev has no agent process for
// (NoAgent), which no retry changes.
func (e *RequestError) Retryable() bool {
	c := strings.ToLower(e.Code)
	transient := strings.Contains(c, "internal") || strings.Contains(c, "unavailable") || strings.Contains(c, "timeout")
	return transient && !e.NoAgent()
}

// NoAgent reports kandev's answer to agent.cancel when no agent process
// runs for the session (after a backend restart, or an agent that died):
// kandev's handler wraps its lifecycle error "no execution for session" in
// an INTERNAL_ERROR, and leaves the session RUNNING. Only a human can
// resume or stop such a session.
func (e *RequestError) NoAgent() bool {
	return e.Action == "agent.cancel" && strings.Contains(strings.ToLower(e.Message), "no execution for session")
}

// Refusal reports whether err is kandev deciding against a request (as
// opposed to failing, or not being reached): retrying it as it is would be
// refused again.
func Refusal(err error) bool {
	var re *RequestError
	return errors.As(err, &re) && !re.Retryable()
}

type envelope struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Action  string          `json:"action,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// AddMessage is message.add: it records a user message in the session and
// prompts the agent. clientMessageID is an idempotency key: kandev returns
// the existing message on a replay.
func (c *Client) AddMessage(ctx context.Context, taskID, sessionID, content, clientMessageID string) error {
	return c.request(ctx, "message.add", map[string]string{
		"task_id": taskID, "session_id": sessionID, "content": content, "client_message_id": clientMessageID,
	})
}

// RespondPermission is permission.respond: it answers a permission
// request with one of its options. kandev refuses it without request_id.
// It carries no idempotency key: a replay is a second answer.
func (c *Client) RespondPermission(ctx context.Context, taskID, sessionID, requestID, pendingID, optionID string) error {
	return c.request(ctx, "permission.respond", map[string]string{
		"task_id": taskID, "session_id": sessionID, "request_id": requestID, "pending_id": pendingID, "option_id": optionID,
	})
}

// Cancel is agent.cancel: it cancels the session's active turn.
func (c *Client) Cancel(ctx context.Context, sessionID string) error {
	return c.request(ctx, "agent.cancel", map[string]string{"session_id": sessionID})
}

// request sends one request on a fresh connection and waits for the answer
// with the same id, ignoring kandev's other traffic on the socket.
func (c *Client) request(ctx context.Context, action string, payload any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	opts := &websocket.DialOptions{}
	if c.token != "" {
		opts.HTTPHeader = http.Header{"Authorization": {"Bearer " + c.token.Reveal()}}
	}
	conn, resp, err := websocket.Dial(ctx, c.wsURL, opts)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		if resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
			return &RequestError{Action: action, Code: "unauthorized", Message: resp.Status}
		}
		return &DialError{URL: c.wsURL, Err: err}
	}
	defer func() { _ = conn.CloseNow() }()
	conn.SetReadLimit(1 << 20)
	body, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	id := uuid.NewString()
	req, _ := json.Marshal(envelope{ID: id, Type: "request", Action: action, Payload: body})
	if err := conn.Write(ctx, websocket.MessageText, req); err != nil {
		return fmt.Errorf("kandev %s: send: %w", action, err)
	}
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return fmt.Errorf("kandev %s: no answer: %w", action, err)
		}
		var env envelope
		if json.Unmarshal(data, &env) != nil || env.ID != id {
			continue
		}
		_ = conn.Close(websocket.StatusNormalClosure, "")
		switch env.Type {
		case "response":
			return nil
		case "error":
			var e struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			}
			_ = json.Unmarshal(env.Payload, &e)
			return &RequestError{Action: action, Code: e.Code, Message: e.Message}
		}
		return fmt.Errorf("kandev %s: unexpected answer type %q", action, env.Type)
	}
}

// ClientMessageID turns an action key into the UUID form kandev's
// client_message_id takes: the same key always gives the same id, so a
// replayed nudge is deduplicated by kandev.
func ClientMessageID(key string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("watchdogd:"+key)).String()
}
