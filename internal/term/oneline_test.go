package term

import (
	"errors"
	"testing"
)

func TestOneLine(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"one line stays as it is", "read schema: no such table: tasks", "read schema: no such table: tasks"},
		// pgx's connect error: a head ending in ':' and one tab-indented
		// line per attempt; sslmode=prefer repeats each address's error.
		{"pgx head runs on, repeated attempt dropped",
			"failed to connect to `user=u database=x`:\n\t127.0.0.1:1 (127.0.0.1): dial error: refused\n\t127.0.0.1:1 (127.0.0.1): dial error: refused",
			"failed to connect to `user=u database=x`: 127.0.0.1:1 (127.0.0.1): dial error: refused"},
		{"different lines are kept, joined by '; '",
			"failed to connect:\n\t[::1]:5432: refused\n\t127.0.0.1:5432: refused",
			"failed to connect: [::1]:5432: refused; 127.0.0.1:5432: refused"},
		{"blank lines and CRs vanish", "first\r\n\r\n  second  \n", "first; second"},
		// Only consecutive repeats are one attempt retried; the same text
		// after another line is a separate event and stays.
		{"a repeat after another line stays", "a\nb\na", "a; b; a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := OneLine(errors.New(c.in)); got != c.want {
				t.Errorf("OneLine(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}
