package kandevtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Answer is one question's answer as kandev's respond takes it.
type Answer struct {
	QuestionID string   `json:"question_id"`
	Options    []string `json:"selected_options,omitempty"`
	Text       string   `json:"custom_text,omitempty"`
}

// Bundle is a question bundle kandev's HTTP API answers for.
type Bundle struct {
	Questions []string // question ids
	// NotCurrent: kandev treats another turn as current (a hidden
	// question): respond answers 409.
	NotCurrent bool
	answered   []Answer
	by         string
}

// Respond is one respond request the server received, taken or not.
type Respond struct {
	PendingID string
	Answers   []Answer
	Claimed   bool
	Status    int
	// At is when the request arrived.
	At time.Time
}

// PermissionAnswer is a permission.respond kandev took.
type PermissionAnswer struct {
	TaskID, SessionID, RequestID, PendingID, OptionID string
}

type permission struct {
	requestID string
	answered  bool
}

// AddBundle makes kandev hold a pending bundle of question ids.
func (s *WSServer) AddBundle(pendingID string, questions ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bundles[pendingID] = &Bundle{Questions: questions}
}

// HideBundle makes kandev treat another turn as current for a bundle: it
// refuses its answer (409), as for a shadowed question.
func (s *WSServer) HideBundle(pendingID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bundles[pendingID].NotCurrent = true
}

// AnswerElsewhere records an answer given in kandev's UI: later answers
// lose to it.
func (s *WSServer) AnswerElsewhere(pendingID string, answers []Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bundles[pendingID].answered, s.bundles[pendingID].by = answers, "ui"
}

// Responds returns every respond request received, in order.
func (s *WSServer) Responds() []Respond {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Respond(nil), s.responds...)
}

// AddPermission makes kandev hold a pending permission request.
func (s *WSServer) AddPermission(pendingID, requestID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.permissions[pendingID] = &permission{requestID: requestID}
}

// PermissionAnswers returns the permission answers kandev took.
func (s *WSServer) PermissionAnswers() []PermissionAnswer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]PermissionAnswer(nil), s.permAnswers...)
}

// SetRespondFault sets (nil: clears) what decides a respond's fate by its
// number (1-based): "" serves it, "slow" takes it and answers 400 ms
// later, "500" answers 500 without taking it,
// "500-after" takes it and answers 500, "drop" takes it and drops the
// connection without an answer.
func (s *WSServer) SetRespondFault(f func(n int) string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respondFault = f
}

// respond serves POST /api/v1/clarification/<pending_id>/respond with
// kandev's semantics: the first answer of a bundle wins; a later one is
// answered claimed false with the winner's response; exactly one answer
// per question (400 otherwise); 404 for an unknown bundle; 409 when kandev
// treats another turn as current.
func (s *WSServer) respond(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/api/v1/clarification/")
	raw, ok := strings.CutSuffix(rest, "/respond")
	pendingID, err := url.PathUnescape(raw)
	if !ok || err != nil || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var body struct {
		Answers []Answer `json:"answers"`
	}
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err := json.Unmarshal(b, &body); err != nil {
		reply(w, http.StatusBadRequest, map[string]any{"error": "invalid payload: " + err.Error()})
		return
	}
	s.mu.Lock()
	s.nResponds++
	fault := ""
	if s.respondFault != nil {
		fault = s.respondFault(s.nResponds)
	}
	status, answer := s.take(pendingID, body.Answers, fault)
	s.responds = append(s.responds, Respond{PendingID: pendingID, Answers: body.Answers, Claimed: answer["claimed"] == true, Status: status, At: time.Now()})
	onAnswer := s.OnAnswer
	s.mu.Unlock()
	if answer["claimed"] == true && onAnswer != nil {
		onAnswer(pendingID, body.Answers)
	}
	switch fault {
	case "slow":
		time.Sleep(400 * time.Millisecond)
		reply(w, status, answer)
	case "500-after":
		reply(w, http.StatusInternalServerError, map[string]any{"error": "injected after taking the answer"})
	case "drop":
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				_ = c.Close()
				return
			}
		}
	default:
		reply(w, status, answer)
	}
}

// take decides a respond, with s.mu held.
func (s *WSServer) take(pendingID string, answers []Answer, fault string) (int, map[string]any) {
	bundle, ok := s.bundles[pendingID]
	switch {
	case fault == "500":
		return http.StatusInternalServerError, map[string]any{"error": "injected"}
	case !ok:
		return http.StatusNotFound, map[string]any{"error": "clarification request not found"}
	case bundle.NotCurrent:
		return http.StatusConflict, map[string]any{"error": "clarification request is no longer active"}
	case len(answers) != len(bundle.Questions):
		return http.StatusBadRequest, map[string]any{"error": fmt.Sprintf("expected %d answers, got %d", len(bundle.Questions), len(answers))}
	case bundle.answered != nil:
		return http.StatusOK, map[string]any{"success": true, "claimed": false, "status": "answered",
			"response": map[string]any{"pending_id": pendingID, "answers": bundle.answered}}
	}
	bundle.answered, bundle.by = answers, "api"
	return http.StatusOK, map[string]any{"success": true, "claimed": true, "status": "answered",
		"response": map[string]any{"pending_id": pendingID, "answers": answers}}
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// servePermission answers permission.respond, with s.mu held: refused
// without request_id (seen), permission_not_found for an unknown or
// answered request (kandev's answer after a restart).
func (s *WSServer) servePermission(p map[string]string) (string, any) {
	if p["request_id"] == "" {
		return "error", map[string]string{"code": "VALIDATION_ERROR", "message": "request_id is required"}
	}
	perm, ok := s.permissions[p["pending_id"]]
	if !ok || perm.answered || perm.requestID != p["request_id"] {
		return "error", map[string]string{"code": "NOT_FOUND", "message": "permission_not_found"}
	}
	perm.answered = true
	a := PermissionAnswer{TaskID: p["task_id"], SessionID: p["session_id"], RequestID: p["request_id"], PendingID: p["pending_id"], OptionID: p["option_id"]}
	s.permAnswers = append(s.permAnswers, a)
	if s.OnPermission != nil {
		s.OnPermission(a)
	}
	return "response", map[string]string{"status": "ok"}
}
