package slacktest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Ephemeral is a message shown to one user (chat.postEphemeral).
type Ephemeral struct {
	Channel, User, Text string
}

// Ephemerals returns every ephemeral message, in order.
func (s *Server) Ephemerals() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ephemeral(nil), s.ephemerals...)
}

// SetUsergroup sets a user group's members (usergroups.users.list).
func (s *Server) SetUsergroup(id string, users ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups == nil {
		s.groups = map[string][]string{}
	}
	s.groups[id] = users
}

// Views returns the views opened (views.open), as Slack received them.
func (s *Server) Views() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.views...)
}

// serveInteract answers the methods interactivity uses.
func (s *Server) serveInteract(method string, r *http.Request) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch method {
	case "chat.postEphemeral":
		ch, user := r.Form.Get("channel"), r.Form.Get("user")
		if !strings.HasPrefix(ch, "C") || user == "" {
			return map[string]any{"ok": false, "error": "channel_not_found"}
		}
		s.ephemerals = append(s.ephemerals, Ephemeral{Channel: ch, User: user, Text: r.Form.Get("text")})
		return map[string]any{"ok": true, "message_ts": "1.000001"}
	case "usergroups.users.list":
		users, ok := s.groups[r.Form.Get("usergroup")]
		if !ok {
			return map[string]any{"ok": false, "error": "no_such_subteam"}
		}
		return map[string]any{"ok": true, "users": users}
	case "views.open": // a JSON body, as slack-go sends it
		var req struct {
			TriggerID string          `json:"trigger_id"`
			View      json.RawMessage `json:"view"`
		}
		if json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req) != nil || req.TriggerID == "" {
			return map[string]any{"ok": false, "error": "invalid_trigger_id"}
		}
		s.views = append(s.views, string(req.View))
		return map[string]any{"ok": true, "view": map[string]any{"id": "V1"}}
	case "apps.connections.open":
		if s.socket == nil {
			return map[string]any{"ok": false, "error": "not_allowed_token_type"}
		}
		return map[string]any{"ok": true, "url": "ws" + strings.TrimPrefix(s.URL, "http") + "/socket"}
	}
	return map[string]any{"ok": false, "error": "unknown_method"}
}

// socketMode is Slack's Socket Mode side: the connections made, the
// envelopes sent and which were acknowledged.
type socketMode struct {
	mu       sync.Mutex
	conn     *websocket.Conn
	conns    int
	pending  []envelope // not acknowledged yet: sent again on each connection
	acked    map[string]time.Duration
	payloads map[string]json.RawMessage // an acknowledgement's payload, by envelope
	nextID   int
	appToken string
}

type envelope struct {
	id   string
	body []byte
	sent time.Time
}

// EnableSocketMode accepts appToken for apps.connections.open and serves
// Socket Mode's WebSocket.
func (s *Server) EnableSocketMode(appToken string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.socket = &socketMode{acked: map[string]time.Duration{}, payloads: map[string]json.RawMessage{}, appToken: appToken}
}

// Connections is how many Socket Mode connections were made.
func (s *Server) Connections() int {
	sm := s.socketMode()
	sm.mu.Lock()
	defer sm.mu.Unlock()
	return sm.conns
}

// SendInteraction sends an interaction payload in an envelope, now when a
// connection is open, else on the next one, and again on every new
// connection until it is acknowledged (as Slack does). It returns the
// envelope's id.
func (s *Server) SendInteraction(payload []byte) string {
	sm := s.socketMode()
	sm.mu.Lock()
	defer sm.mu.Unlock()
	sm.nextID++
	id := fmt.Sprintf("env-%d", sm.nextID)
	b, _ := json.Marshal(map[string]any{"envelope_id": id, "type": "interactive", "accepts_response_payload": false,
		"payload": json.RawMessage(payload)})
	e := envelope{id: id, body: b, sent: time.Now()}
	sm.pending = append(sm.pending, e)
	if sm.conn != nil {
		_ = sm.conn.Write(context.Background(), websocket.MessageText, b)
	}
	return id
}

// Acked says whether an envelope was acknowledged, and how long after it
// was first sent.
func (s *Server) Acked(id string) (time.Duration, bool) {
	sm := s.socketMode()
	sm.mu.Lock()
	defer sm.mu.Unlock()
	d, ok := sm.acked[id]
	return d, ok
}

// AckPayload is the payload an envelope's acknowledgement carried (a form
// sent back to mend: response_action errors), nil when none.
func (s *Server) AckPayload(id string) json.RawMessage {
	sm := s.socketMode()
	sm.mu.Lock()
	defer sm.mu.Unlock()
	return sm.payloads[id]
}

// Disconnect sends Slack's disconnect envelope on the open connection
// (Slack does so before it refreshes a connection): the client connects
// again.
func (s *Server) Disconnect() {
	sm := s.socketMode()
	sm.mu.Lock()
	defer sm.mu.Unlock()
	if sm.conn != nil {
		_ = sm.conn.Write(context.Background(), websocket.MessageText,
			[]byte(`{"type":"disconnect","reason":"refresh_requested","debug_info":{"host":"slacktest"}}`))
	}
}

func (s *Server) socketMode() *socketMode {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.socket == nil {
		panic("slacktest: EnableSocketMode first")
	}
	return s.socket
}

// serveSocket is one Socket Mode connection: hello, the envelopes not
// acknowledged yet, pings every second, and acknowledgements read.
func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	sm := s.socketMode()
	// slack-go's client sends Origin: https://api.slack.com, as it would
	// to Slack.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: []string{"api.slack.com"}})
	if err != nil {
		return
	}
	ctx := r.Context()
	sm.mu.Lock()
	if sm.conn != nil {
		_ = sm.conn.Close(websocket.StatusNormalClosure, "replaced")
	}
	sm.conn = c
	sm.conns++
	_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"hello","num_connections":1,"connection_info":{"app_id":"A1"}}`))
	for _, e := range sm.pending {
		_ = c.Write(ctx, websocket.MessageText, e.body)
	}
	sm.mu.Unlock()
	go func() {
		for ctx.Err() == nil {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_ = c.Ping(pctx)
			cancel()
			time.Sleep(time.Second)
		}
	}()
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			break
		}
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(b, &ack) != nil || ack.EnvelopeID == "" {
			continue
		}
		sm.mu.Lock()
		for i, e := range sm.pending {
			if e.id == ack.EnvelopeID {
				sm.acked[e.id] = time.Since(e.sent)
				if len(ack.Payload) > 0 {
					sm.payloads[e.id] = ack.Payload
				}
				sm.pending = append(sm.pending[:i], sm.pending[i+1:]...)
				break
			}
		}
		sm.mu.Unlock()
	}
	sm.mu.Lock()
	if sm.conn == c {
		sm.conn = nil
	}
	sm.mu.Unlock()
}
