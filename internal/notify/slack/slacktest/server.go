// Package slacktest is a local server that speaks the part of Slack's Web
// API watchdogd uses (chat.postMessage, chat.update, conversations.history,
// conversations.replies, auth.test) with Slack's answers: ok:false bodies,
// 429 with Retry-After, Block Kit validation. It records a message when it
// receives the request, before any injected delay, so a client that times
// out may still have posted — exactly the case watchdogd settles from
// evidence.
package slacktest

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Message is one message the server holds.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string
	Text     string
	Blocks   []map[string]any
	Metadata *Metadata
	Edits    int
	At       time.Time
	// Deleted marks a thread's first message deleted in Slack: its replies
	// stay, under a "This message was deleted." placeholder.
	Deleted bool
}

// Metadata is Slack's message metadata.
type Metadata struct {
	EventType    string         `json:"event_type"`
	EventPayload map[string]any `json:"event_payload"`
}

// Fault is an injected answer.
type Fault struct {
	// Status answers with this HTTP status instead of 200.
	Status int
	// RetryAfter adds Retry-After (seconds) to a 429.
	RetryAfter int
	// SlackError answers ok:false with this code.
	SlackError string
	// Delay waits before answering (after recording, for posts that land).
	Delay time.Duration
	// Record keeps the message even though the answer is a fault (a 5xx
	// after the post landed).
	Record bool
}

// Server is the fake Slack.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	token    string
	messages []*Message
	calls    map[string]int
	seq      int64
	// Fault, if set, decides each request's answer by method, the method's
	// call number (1-based) and the request's form (channel, thread_ts…).
	fault     func(method string, n int) Fault
	faultForm func(method string, n int, form url.Values) Fault

	// What interactivity uses (interact.go).
	ephemerals []Ephemeral
	groups     map[string][]string
	views      []string
	socket     *socketMode
}

// New starts a server accepting token.
func New(token string) *Server { return start(token, httptest.NewServer) }

// NewTLS starts the server over HTTPS, with httptest's certificate (valid
// for example.com and 127.0.0.1, signed by no public CA): the Slack a
// client reaches through a proxy and trusts through a company CA.
func NewTLS(token string) *Server { return start(token, httptest.NewTLSServer) }

// NewTLSConfig starts the server over HTTPS with the certificate cfg
// presents (a test CA's, say, which a client trusts only when given the CA).
func NewTLSConfig(token string, cfg *tls.Config) *Server {
	return start(token, func(h http.Handler) *httptest.Server {
		srv := httptest.NewUnstartedServer(h)
		srv.TLS = cfg
		srv.StartTLS()
		return srv
	})
}

func start(token string, serve func(http.Handler) *httptest.Server) *Server {
	s := &Server{token: token, calls: map[string]int{}}
	s.Server = serve(http.HandlerFunc(s.handle))
	return s
}

// URL is the API base URL for slack.api_url.
func (s *Server) APIURL() string { return s.URL + "/api/" }

// SetToken makes token the only one accepted, as when a workspace admin
// rotates the bot token: the old one answers invalid_auth from then on.
func (s *Server) SetToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// SetFault installs (or with nil removes) fault injection.
func (s *Server) SetFault(f func(method string, n int) Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault, s.faultForm = f, nil
}

// SetFaultByRequest installs fault injection that also sees the request.
func (s *Server) SetFaultByRequest(f func(method string, n int, form url.Values) Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault, s.faultForm = nil, f
}

// Messages returns a copy of every message, in posting order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, len(s.messages))
	for i, m := range s.messages {
		out[i] = *m
	}
	return out
}

// Delete deletes a message as a person would in Slack's client: a message
// with replies becomes a placeholder that keeps its thread, any other is
// gone. Either way, edits of it answer message_not_found.
func (s *Server) Delete(channel, ts string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, m := range s.messages {
		if m.Channel != channel || m.TS != ts {
			continue
		}
		for _, r := range s.messages {
			if r.Channel == channel && r.ThreadTS == ts {
				m.Deleted, m.Text, m.Blocks, m.Metadata = true, "This message was deleted.", nil, nil
				return true
			}
		}
		s.messages = append(s.messages[:i], s.messages[i+1:]...)
		return true
	}
	return false
}

// Calls is how often a method was called.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/socket" {
		s.serveSocket(w, r)
		return
	}
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	token := r.Form.Get("token")
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		token = strings.TrimPrefix(h, "Bearer ")
	}
	s.mu.Lock()
	s.calls[method]++
	n := s.calls[method]
	var f Fault
	switch {
	case s.fault != nil:
		f = s.fault(method, n)
	case s.faultForm != nil:
		f = s.faultForm(method, n, r.Form)
	}
	valid := token == s.token || s.socket != nil && token == s.socket.appToken && method == "apps.connections.open"
	s.mu.Unlock()
	if !valid {
		write(w, map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	var answer map[string]any
	if f.Status == 0 && f.SlackError == "" || f.Record {
		answer = s.serve(method, r)
	}
	if f.Delay > 0 {
		time.Sleep(f.Delay)
	}
	switch {
	case f.Status == http.StatusTooManyRequests:
		if f.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
		}
		w.WriteHeader(f.Status)
		return
	case f.Status != 0:
		http.Error(w, http.StatusText(f.Status), f.Status)
		return
	case f.SlackError != "":
		write(w, map[string]any{"ok": false, "error": f.SlackError})
		return
	}
	write(w, answer)
}

func write(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) serve(method string, r *http.Request) map[string]any {
	switch method {
	case "auth.test":
		return map[string]any{"ok": true, "user_id": "UBOT", "team": "test"}
	case "chat.postMessage":
		return s.post(r)
	case "chat.update":
		return s.update(r)
	case "conversations.history":
		return s.history(r, "")
	case "conversations.replies":
		return s.history(r, r.Form.Get("ts"))
	}
	return s.serveInteract(method, r)
}

func (s *Server) post(r *http.Request) map[string]any {
	channel := r.Form.Get("channel")
	if !strings.HasPrefix(channel, "C") {
		return map[string]any{"ok": false, "error": "channel_not_found"}
	}
	var blocks []map[string]any
	if b := r.Form.Get("blocks"); b != "" {
		if err := json.Unmarshal([]byte(b), &blocks); err != nil {
			return map[string]any{"ok": false, "error": "invalid_blocks_format"}
		}
	}
	text := r.Form.Get("text")
	if text == "" && len(blocks) == 0 {
		return map[string]any{"ok": false, "error": "no_text"}
	}
	if e := validate(text, blocks); e != "" {
		return map[string]any{"ok": false, "error": e}
	}
	m := &Message{Channel: channel, ThreadTS: r.Form.Get("thread_ts"), Text: text, Blocks: blocks, At: time.Now()}
	if md := r.Form.Get("metadata"); md != "" {
		m.Metadata = &Metadata{}
		if err := json.Unmarshal([]byte(md), m.Metadata); err != nil {
			return map[string]any{"ok": false, "error": "invalid_metadata_format"}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.ThreadTS != "" && s.find(channel, m.ThreadTS) == nil {
		return map[string]any{"ok": false, "error": "thread_not_found"}
	}
	// ts is the post's time in microseconds, strictly increasing.
	s.seq = max(s.seq+1, time.Now().UnixMicro())
	m.TS = fmt.Sprintf("%d.%06d", s.seq/1000000, s.seq%1000000)
	s.messages = append(s.messages, m)
	return map[string]any{"ok": true, "channel": channel, "ts": m.TS, "message": map[string]any{"text": text, "ts": m.TS}}
}

func (s *Server) find(channel, ts string) *Message {
	for _, m := range s.messages {
		if m.Channel == channel && m.TS == ts {
			return m
		}
	}
	return nil
}

func (s *Server) update(r *http.Request) map[string]any {
	channel, ts := r.Form.Get("channel"), r.Form.Get("ts")
	var blocks []map[string]any
	if b := r.Form.Get("blocks"); b != "" {
		if err := json.Unmarshal([]byte(b), &blocks); err != nil {
			return map[string]any{"ok": false, "error": "invalid_blocks_format"}
		}
	}
	if e := validate(r.Form.Get("text"), blocks); e != "" {
		return map[string]any{"ok": false, "error": e}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.find(channel, ts)
	if m == nil || m.Deleted {
		return map[string]any{"ok": false, "error": "message_not_found"}
	}
	m.Text, m.Blocks = r.Form.Get("text"), blocks
	m.Edits++
	return map[string]any{"ok": true, "channel": channel, "ts": ts, "text": m.Text}
}

// history answers conversations.history (thread == "": top-level messages)
// or conversations.replies (the thread's parent and replies), newest first.
func (s *Server) history(r *http.Request, thread string) map[string]any {
	channel := r.Form.Get("channel")
	oldest, _ := strconv.ParseFloat(r.Form.Get("oldest"), 64)
	withMeta := r.Form.Get("include_all_metadata") == "1"
	s.mu.Lock()
	defer s.mu.Unlock()
	if thread != "" && s.find(channel, thread) == nil {
		return map[string]any{"ok": false, "error": "thread_not_found"}
	}
	var out []map[string]any
	for _, m := range s.messages {
		if m.Channel != channel {
			continue
		}
		if thread == "" && m.ThreadTS != "" || thread != "" && m.TS != thread && m.ThreadTS != thread {
			continue
		}
		if ts, _ := strconv.ParseFloat(m.TS, 64); ts < oldest {
			continue
		}
		msg := map[string]any{"type": "message", "ts": m.TS, "text": m.Text}
		if m.ThreadTS != "" {
			msg["thread_ts"] = m.ThreadTS
		}
		if withMeta && m.Metadata != nil {
			msg["metadata"] = m.Metadata
		}
		out = append(out, msg)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i]["ts"].(string) > out[j]["ts"].(string) })
	if out == nil {
		out = []map[string]any{}
	}
	return map[string]any{"ok": true, "messages": out, "has_more": false}
}
