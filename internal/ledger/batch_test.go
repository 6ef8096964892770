package ledger

import (
	"slices"
	"strings"
	"testing"
)

// TestChunks: how many rows one statement carries.
func TestChunks(t *testing.T) {
	small, big, huge := strings.Repeat("x", 10), strings.Repeat("x", 700<<10), strings.Repeat("x", 5<<20)
	rep := func(s string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	size := func(s string) int { return len(s) }
	for _, c := range []struct {
		name  string
		items []string
		want  []int // the batches' lengths
	}{
		{"none: no batch", nil, nil},
		{"fewer than a batch: one", rep(small, 10), []int{10}},
		{"many small ones: a thousand a batch", rep(small, 2500), []int{batchRows, batchRows, 500}},
		{"700 KB each: two reach the megabyte", rep(big, 5), []int{2, 2, 1}},
		{"one over the megabyte still goes, alone", rep(huge, 3), []int{1, 1, 1}},
		{"a big one joins the batch it closes", append(rep(small, 3), huge, small), []int{4, 1}},
	} {
		var got []int
		total := 0
		for _, b := range chunks(c.items, size) {
			got = append(got, len(b))
			total += len(b)
		}
		if total != len(c.items) || !slices.Equal(got, c.want) {
			t.Errorf("%s: batches %v, want %v", c.name, got, c.want)
		}
	}
}
