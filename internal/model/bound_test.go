package model_test

import (
	"slices"
	"testing"

	"github.com/watchdogd/watchdogd/internal/model"
)

// TestCut: a value is cut to n characters, the mark included, by UTF-8
// sequence, and only when it has more than n.
func TestCut(t *testing.T) {
	for _, c := range []struct {
		name, in string
		n        int
		want     string
	}{
		{"empty", "", 10, ""},
		{"shorter", "short", 10, "short"},
		// Exactly n characters, more bytes than n: kept whole.
		{"n characters", "éééééééééé", 10, "éééééééééé"},
		// One more than n: n-5 characters and the 5 of the mark.
		{"n+1", "abcdefghijk", 10, "abcde… cut"},
		{"multibyte", "éééééééééééé", 10, "ééééé… cut"},
		// An invalid byte counts as a character; none is split.
		{"invalid UTF-8", "\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5", 10, "\xff\xfe\xfd\xfc\xfb… cut"},
		{"4-byte", "😀😀😀😀😀😀😀😀😀😀😀", 10, "😀😀😀😀😀… cut"},
		// n shorter than the mark: the mark alone still says so.
		{"tiny n", "abcdefgh", 3, "… cut"},
	} {
		if got := model.Cut(c.in, c.n); got != c.want {
			t.Errorf("%s: Cut(%q, %d) = %q, want %q", c.name, c.in, c.n, got, c.want)
		}
	}
}

// TestCutOptions: at most n options, the last saying more were cut.
func TestCutOptions(t *testing.T) {
	for _, c := range []struct {
		in, want []string
	}{
		{nil, nil},
		{[]string{"a", "b", "c"}, []string{"a", "b", "c"}},        // n: kept
		{[]string{"a", "b", "c", "d"}, []string{"a", "b", "cut"}}, // n+1: n-1 and the mark
	} {
		in := slices.Clone(c.in)
		if got := model.CutOptions(in, 3, "cut"); !slices.Equal(got, c.want) {
			t.Errorf("CutOptions(%q, 3) = %q, want %q", c.in, got, c.want)
		}
		if !slices.Equal(in, c.in) {
			t.Errorf("CutOptions changed its input: %q, was %q", in, c.in)
		}
	}
}
