package term

import (
	"testing"
	"time"
)

func TestMinutes(t *testing.T) {
	for d, want := range map[time.Duration]string{42 * time.Minute: "42 min", 70 * time.Minute: "1 h 10 min", 2 * time.Hour: "2 h", 50 * time.Hour: "2 d 2 h", 30 * time.Second: "30 s"} {
		if got := Minutes(d); got != want {
			t.Errorf("Minutes(%v) = %q, want %q", d, got, want)
		}
	}
}
