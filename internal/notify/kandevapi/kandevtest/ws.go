// Package kandevtest is a test double of kandev's write side: its
// WebSocket API (message.add, agent.cancel, permission.respond) and its
// HTTP clarification respond, for the tests of kandev's API client
// (internal/notify/kandevapi, which it sits under) and the binary's.
package kandevtest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/coder/websocket"
)

// WSServer speaks kandev's WebSocket envelope for message.add and
// agent.cancel: requests {"id","type":"request","action","payload"} are
// answered with the same id and type "response" or "error". message.add
// deduplicates on client_message_id and refuses RUNNING and ended sessions;
// agent.cancel is refused for a session with no agent process. Refusals
// carry kandev's own codes and messages (pkg/websocket, the message and
// orchestrator handlers).
type WSServer struct {
	*httptest.Server
	// Token, when set, is the PAT every connection must present.
	Token string

	mu       sync.Mutex
	state    map[string]string // session → state
	messages []WSMessage
	seen     map[string]bool
	dups     int
	cancels  []string
	noAgent  map[string]bool
	fail     func(action string) string
	// OnMessage, if set, runs for each new message (a test can write the
	// user row into a kandev database, as kandev would).
	OnMessage func(m WSMessage)
	// OnCancel, if set, runs for each agent.cancel (a test can move the
	// session out of RUNNING in the database, as kandev would).
	OnCancel func(session string)
	// OnAnswer, if set, runs for each answer kandev takes (a test can mark
	// the bundle's rows answered in the database, as kandev would).
	OnAnswer func(pendingID string, answers []Answer)
	// OnPermission, if set, runs for each permission answer kandev takes.
	OnPermission func(a PermissionAnswer)

	bundles      map[string]*Bundle
	responds     []Respond
	nResponds    int
	respondFault func(n int) string
	permissions  map[string]*permission
	permAnswers  []PermissionAnswer
}

// WSMessage is a message.add kandev accepted.
type WSMessage struct {
	TaskID, SessionID, Content, ClientMessageID string
}

// NewWSServer starts a server; states maps session ids to their state.
func NewWSServer(states map[string]string) *WSServer {
	return startWS(states, httptest.NewServer)
}

// NewWSServerTLS starts the server over HTTPS (wss), with httptest's
// certificate, which no public CA signed.
func NewWSServerTLS(states map[string]string) *WSServer {
	return startWS(states, httptest.NewTLSServer)
}

func startWS(states map[string]string, serve func(http.Handler) *httptest.Server) *WSServer {
	s := &WSServer{state: states, seen: map[string]bool{}, noAgent: map[string]bool{}, bundles: map[string]*Bundle{}, permissions: map[string]*permission{}}
	if s.state == nil {
		s.state = map[string]string{}
	}
	s.Server = serve(http.HandlerFunc(s.handle))
	return s
}

// BaseURL is kandev.base_url for this server.
func (s *WSServer) BaseURL() string { return s.URL }

// Messages returns accepted messages.
func (s *WSServer) Messages() []WSMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]WSMessage(nil), s.messages...)
}

// Duplicates counts message.add replays answered with the existing message.
func (s *WSServer) Duplicates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dups
}

// Cancels returns the session ids of the agent.cancel requests served,
// refused ones included.
func (s *WSServer) Cancels() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.cancels...)
}

// SetFail sets (nil: clears) what decides a request's fate: "" serves it,
// "close" drops the connection mid-request, anything else is an error code.
// It is set through the mutex because tests change it between requests,
// and the server's last read of it is ordered before the test's next write
// only by a closed connection, which is no synchronization.
func (s *WSServer) SetFail(f func(action string) string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = f
}

func (s *WSServer) failFunc() func(action string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fail
}

// SetNoAgent makes kandev have no agent process for session (a backend
// restart lost it, or the agent died): the session stays as it is, and
// agent.cancel is refused.
func (s *WSServer) SetNoAgent(session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noAgent[session] = true
}

// SetState changes a session's state.
func (s *WSServer) SetState(session, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state[session] = state
}

func (s *WSServer) handle(w http.ResponseWriter, r *http.Request) {
	if s.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.Token && r.URL.Query().Get("token") != s.Token {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/api/v1/clarification/") {
		s.respond(w, r)
		return
	}
	if r.URL.Path != "/ws" {
		http.NotFound(w, r)
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer func() { _ = conn.CloseNow() }()
	ctx := r.Context()
	// kandev pushes notifications on the same socket; clients must skip them.
	_ = conn.Write(ctx, websocket.MessageText, []byte(`{"type":"notification","action":"session.updated","payload":{}}`))
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var req struct {
			ID      string          `json:"id"`
			Type    string          `json:"type"`
			Action  string          `json:"action"`
			Payload json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &req) != nil || req.Type != "request" {
			continue
		}
		if fail := s.failFunc(); fail != nil {
			switch f := fail(req.Action); f {
			case "":
			case "close":
				return
			default:
				s.reply(ctx, conn, req.ID, "error", map[string]string{"code": f, "message": "injected " + f})
				continue
			}
		}
		typ, payload := s.serve(req.Action, req.Payload)
		s.reply(ctx, conn, req.ID, typ, payload)
	}
}

func (s *WSServer) reply(ctx context.Context, conn *websocket.Conn, id, typ string, payload any) {
	b, _ := json.Marshal(map[string]any{"id": id, "type": typ, "payload": payload})
	_ = conn.Write(ctx, websocket.MessageText, b)
}

func (s *WSServer) serve(action string, raw json.RawMessage) (string, any) {
	var p map[string]string
	_ = json.Unmarshal(raw, &p)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch action {
	case "message.add":
		if id := p["client_message_id"]; id != "" && s.seen[id] {
			s.dups++
			return "response", map[string]string{"status": "duplicate"}
		}
		switch st := s.state[p["session_id"]]; st {
		case "RUNNING":
			return "error", map[string]string{"code": "VALIDATION_ERROR", "message": "Agent is currently processing. Please wait for the current operation to complete."}
		case "COMPLETED", "FAILED", "CANCELLED":
			return "error", map[string]string{"code": "VALIDATION_ERROR", "message": "Session has ended. Please create a new session to continue."}
		}
		m := WSMessage{TaskID: p["task_id"], SessionID: p["session_id"], Content: p["content"], ClientMessageID: p["client_message_id"]}
		s.seen[m.ClientMessageID] = true
		s.messages = append(s.messages, m)
		if s.OnMessage != nil {
			s.OnMessage(m)
		}
		return "response", map[string]string{"status": "ok"}
	case "permission.respond":
		return s.servePermission(p)
	case "agent.cancel":
		s.cancels = append(s.cancels, p["session_id"])
		if s.noAgent[p["session_id"]] {
			return "error", map[string]string{"code": "INTERNAL_ERROR",
				"message": `Failed to cancel agent: cancel agent: session "` + p["session_id"] + `": no execution for session`}
		}
		if s.state[p["session_id"]] == "RUNNING" {
			s.state[p["session_id"]] = "WAITING_FOR_INPUT"
		}
		if s.OnCancel != nil {
			s.OnCancel(p["session_id"])
		}
		return "response", map[string]string{"status": "ok"}
	}
	return "error", map[string]string{"code": "UNKNOWN_ACTION", "message": "unknown action " + action}
}
