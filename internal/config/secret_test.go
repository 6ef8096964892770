package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const leak = "xoxb-must-not-leak"

// holder stands for any struct that carries a secret (the Slack and kandev
// clients do): formatting the struct must not print it either.
type holder struct {
	Name  string
	Token Secret
	Ptr   *Secret
}

// TestSecretNeverPrints: every way a value reaches text — fmt verbs, in a
// struct and through a pointer, JSON, both slog handlers — shows the
// placeholder, never the value.
func TestSecretNeverPrints(t *testing.T) {
	s := Secret(leak)
	h := holder{Name: "slack", Token: s, Ptr: &s}
	var outs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.3s"} {
		outs = append(outs, fmt.Sprintf(verb, s), fmt.Sprintf(verb, h), fmt.Sprintf(verb, &h), fmt.Sprintf(verb, []Secret{s}))
	}
	outs = append(outs, fmt.Sprint(s), fmt.Sprintln(h), fmt.Errorf("wrapped: %w: %v", os.ErrClosed, h).Error())
	j, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	outs = append(outs, string(j))
	var text, js bytes.Buffer
	slog.New(slog.NewTextHandler(&text, nil)).Info("x", "token", s, "holder", h)
	slog.New(slog.NewJSONHandler(&js, nil)).Info("x", "token", s, "holder", h)
	outs = append(outs, text.String(), js.String())
	for _, o := range outs {
		if strings.Contains(o, leak) || strings.Contains(o, fmt.Sprintf("%x", leak)) || strings.Contains(o, fmt.Sprintf("%X", leak)) {
			t.Fatalf("secret printed: %s", o)
		}
	}
	if Secret("").String() != "" || s.String() != "<redacted>" || s.Reveal() != leak {
		t.Fatal("String/Reveal contract broken")
	}
}

// TestSecretNeverInPanic: a process that panics with a secret, or with a
// struct or an error carrying one, prints no secret in its panic message
// or stack trace.
func TestSecretNeverInPanic(t *testing.T) {
	if mode := os.Getenv("WATCHDOGD_SECRET_PANIC"); mode != "" {
		s := Secret(leak)
		switch mode {
		case "secret":
			panic(s)
		case "struct":
			panic(holder{Name: "x", Token: s, Ptr: &s})
		case "error":
			panic(fmt.Errorf("deliver: %v", holder{Token: s}))
		}
		return
	}
	for _, mode := range []string{"secret", "struct", "error"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSecretNeverInPanic$")
		cmd.Env = append(os.Environ(), "WATCHDOGD_SECRET_PANIC="+mode, "GOTRACEBACK=all")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "panic:") {
			t.Fatalf("%s: the child did not panic: %v\n%s", mode, err, out)
		}
		if strings.Contains(string(out), leak) {
			t.Fatalf("%s: secret in the panic output:\n%s", mode, out)
		}
	}
}
