package wc

import (
	"slices"
	"testing"
)

// The expected splits are what Java's line.toLowerCase().split("\\W+") returns for them.
func TestSplitWords(t *testing.T) {
	for _, c := range []struct {
		line string
		want []string
	}{
		{"Hello, World foo_bar 42", []string{"hello", "world", "foo_bar", "42"}},
		{" leading space", []string{"", "leading", "space"}},
		{"trailing. ", []string{"trailing"}},
		{"", []string{""}},
		{" ", nil},
		{" ,. ", nil},
		{"one", []string{"one"}},
	} {
		if got := SplitWords(c.line); !slices.Equal(got, c.want) {
			t.Errorf("SplitWords(%q) = %q, want %q", c.line, got, c.want)
		}
	}
}

// A lower-case line costs one allocation: the result, at its final size.
func TestSplitWordsAllocatesOnce(t *testing.T) {
	line := "the quick brown fox jumps over the lazy dog again"
	if n := testing.AllocsPerRun(100, func() { _ = SplitWords(line) }); n != 1 {
		t.Fatalf("SplitWords allocated %v times per line, want 1", n)
	}
}
