package ledger

import (
	"strings"
	"testing"
)

// TestNextBatch: how many refreshes one statement carries.
func TestNextBatch(t *testing.T) {
	small, big, huge := Refresh{Finding: "{}"}, Refresh{Finding: strings.Repeat("x", 700<<10)}, Refresh{Finding: strings.Repeat("x", 5<<20)}
	rep := func(r Refresh, n int) []Refresh {
		out := make([]Refresh, n)
		for i := range out {
			out[i] = r
		}
		return out
	}
	for _, c := range []struct {
		name string
		rs   []Refresh
		want int
	}{
		{"fewer than a batch: all", rep(small, 10), 10},
		{"many small ones: a thousand", rep(small, 2500), refreshBatch},
		{"700 KB findings: two reach the megabyte", rep(big, 5), 2},
		{"one finding over the megabyte still goes, alone", rep(huge, 3), 1},
	} {
		if got := len(nextBatch(c.rs)); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
