//go:build faults

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"net/textproto"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/watchdogd/watchdogd/internal/kandevdb"
)

// smtpStandIn is a mail server that takes every message it is sent and
// keeps it whole (Alertmanager's email notifier speaks plain SMTP to it).
type smtpStandIn struct {
	addr string
	mu   sync.Mutex
	msgs [][]byte
}

func startSMTP(t *testing.T) *smtpStandIn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	s := &smtpStandIn{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

// serve speaks enough SMTP for one client: greeting, EHLO, MAIL, RCPT,
// DATA (dot-stuffed, read by textproto), QUIT.
func (s *smtpStandIn) serve(c net.Conn) {
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	r, w := textproto.NewReader(bufio.NewReader(c)), textproto.NewWriter(bufio.NewWriter(c))
	_ = w.PrintfLine("220 stand-in ESMTP")
	for {
		line, err := r.ReadLine()
		if err != nil {
			return
		}
		switch verb := strings.ToUpper(strings.Fields(line + " x")[0]); verb {
		case "EHLO":
			_ = w.PrintfLine("250-stand-in")
			_ = w.PrintfLine("250 8BITMIME")
		case "DATA":
			_ = w.PrintfLine("354 go ahead")
			msg, err := r.ReadDotBytes()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.msgs = append(s.msgs, msg)
			s.mu.Unlock()
			_ = w.PrintfLine("250 taken")
		case "QUIT":
			_ = w.PrintfLine("221 bye")
			return
		default: // HELO, MAIL, RCPT, RSET, NOOP
			_ = w.PrintfLine("250 ok")
		}
	}
}

func (s *smtpStandIn) messages() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.msgs...)
}

// emailHTML is the text/html part of an email, decoded.
func emailHTML(t *testing.T, raw []byte) string {
	t.Helper()
	m, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	_, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	parts := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := parts.NextPart()
		if err != nil {
			t.Fatalf("no text/html part: %v\n%s", err, raw)
		}
		if !strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") {
			continue
		}
		var body io.Reader = p
		if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
			body = quotedprintable.NewReader(p)
		}
		b, err := io.ReadAll(body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
}

// visible is what a mail reader shows of an HTML body: no style sheet, no
// tags, entities decoded, each run of white space one space.
func visible(h string) string {
	h = regexp.MustCompile(`(?s)<style.*?</style>`).ReplaceAllString(h, "")
	h = html.UnescapeString(regexp.MustCompile(`(?s)<[^>]*>`).ReplaceAllString(h, " "))
	return strings.Join(strings.Fields(h), " ")
}

// TestFaultAlertmanagerAnnotations: an agent's title full of Slack markup
// and HTML, through a real Alertmanager to a Slack receiver whose template
// is the usual {{ .CommonAnnotations.summary }} / description, and to its
// default email template. The Slack stand-in is sent the words as written
// with nothing Slack acts on (no < or >, so no <!channel> and no
// <url|label> link; no *, _, ~ or `, so no formatting; every & and @
// followed by a zero-width space, so no entity and no @here); the email
// shows the same words and no entity; the summary is cut at 1,024.
func TestFaultAlertmanagerAnnotations(t *testing.T) {
	var mu sync.Mutex
	var posts []string
	slackHook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		posts = append(posts, string(b))
		mu.Unlock()
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(slackHook.Close)
	smtp := startSMTP(t)
	am := startAlertmanagerWith(t, fmt.Sprintf(`global:
  smtp_smarthost: %s
  smtp_from: alertmanager@example.com
  smtp_require_tls: false
route:
  receiver: people
  group_wait: 1s
receivers:
  - name: people
    slack_configs:
      - api_url: %s/hook
        channel: "#agents"
        title: '{{ .CommonAnnotations.summary }}'
        text: '{{ .CommonAnnotations.description }}'
    email_configs:
      - to: oncall@example.com
`, smtp.addr, slackHook.URL))

	const hostile = "Ship <!channel> <https://evil.example|click here> *now* & _then_ ~maybe~ `rm -rf /` @here R&D"
	title := hostile + " " + strings.Repeat("a", 1100)
	b := kandevdb.NewBuilder(time.Now())
	s := b.Session("sess-hostile", title, "ws-ops", "WAITING_FOR_INPUT", time.Hour, "")
	s.Turn("turn-h", 50*time.Minute, -1, "").Clarification("p-h", "q-h", "Which driver?", "Which SQL driver?",
		[]kandevdb.QuestionOpt{{ID: "pgx", Label: "pgx"}}, "", 30*time.Minute, nil)
	extra, base := daemonConfig(t, "alertmanager:\n  urls: ["+am+"]\n  resend_interval: 1s\n  timeout: 1s\n"+
		"policy:\n  unanswered_clarification:\n    steps: [{after: 0s, action: alertmanager}]\n")
	e := newEnv(t, b.DS, "sqlite", extra)
	e.startDaemon(base)

	// What a person reads, in Slack and in the email alike: each character
	// of markup in a look-alike, & and @ followed by a zero-width space.
	const zw = "\u200b"
	shown := "Ship \u2039!channel\u203a \u2039https://evil.example|click here\u203a \u2217now\u2217 &" + zw + " \u02cdthen\u02cd \u223cmaybe\u223c \u02cbrm -rf /\u02cb @" + zw + "here R&" + zw + "D"
	head := "Unanswered question on " + shown + " "
	summary := head + strings.Repeat("a", 1024-utf8.RuneCountInString(head)-utf8.RuneCountInString("… cut")) + "… cut"
	description := regexp.MustCompile(`^Question waiting \d+ min on ` + regexp.QuoteMeta(shown+" "+strings.Repeat("a", 1100)) + `\. Answer it in kandev\.$`)

	waitFor(t, 30*time.Second, "Alertmanager's Slack post and its email", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(posts) > 0 && len(smtp.messages()) > 0
	})
	mu.Lock()
	var post struct {
		Attachments []struct{ Title, Text string } `json:"attachments"`
	}
	err := json.Unmarshal([]byte(posts[0]), &post)
	mu.Unlock()
	if err != nil || len(post.Attachments) != 1 {
		t.Fatalf("the Slack post %v: %s", err, posts[0])
	}
	got := post.Attachments[0]
	if got.Title != summary {
		t.Errorf("Slack title\n%q\nwant\n%q", got.Title, summary)
	}
	if !description.MatchString(got.Text) {
		t.Errorf("Slack text %q, want %s", got.Text, description)
	}
	for _, v := range []string{got.Title, got.Text} {
		if strings.ContainsAny(v, "<>*_~`") || regexp.MustCompile(`[&@][^`+zw+`]`).MatchString(v) {
			t.Errorf("markup Slack acts on left in %q", v)
		}
	}

	page := visible(emailHTML(t, smtp.messages()[0]))
	for _, want := range []string{"summary = " + summary, "description = "} {
		if !strings.Contains(page, want) {
			t.Errorf("the email does not show %q:\n%s", want, page)
		}
	}
	if i := strings.Index(page, "description = "); i < 0 || !regexp.MustCompile(description.String()[1:len(description.String())-1]).MatchString(page[i:]) {
		t.Errorf("the email's description:\n%s", page)
	}
	if regexp.MustCompile(`&(lt|gt|amp|quot|#\d+);`).MatchString(page) {
		t.Errorf("an entity shows in the email:\n%s", page)
	}
	t.Logf("FIGURE annotations: Slack title %d characters, text %d; email %d bytes", utf8.RuneCountInString(got.Title),
		utf8.RuneCountInString(got.Text), len(smtp.messages()[0]))
}
